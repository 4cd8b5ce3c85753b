package federation

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"svc/platform/apierr"
	"svc/storage"
)

// TestSSRFZonedLiteralsRefused: an IPv6 zone ([::1%25lo], %25eth0, %251)
// once walked past the blocklist. A live plain-HTTP discovery server on
// [::1] shows the refusal is the guard: registration answers
// apierr.OIDCSSRFBlocked, and a zoned record that reached the store anyway is never
// fetched on reload (the dial-time check).
func TestSSRFZonedLiteralsRefused(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":"http://%s","jwks_uri":"http://%s/jwks"}`, r.Host, r.Host)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]

	p, store := newTestProviders(t, newTestIdP(t), func(c *ProvidersConfig) {
		c.RequireHTTPS = false
		c.Net.AllowPrivate = false
		c.Net.RootCAs = nil
	})
	zoned := []string{
		"http://[::1%25lo]" + port + "/.well-known/openid-configuration",
		"http://[::1%25eth0]" + port + "/.well-known/openid-configuration",
		"http://[::1%251]" + port + "/.well-known/openid-configuration",
		"http://[fe80::1%25eth0]/.well-known/openid-configuration",
		"http://[fe80::1%251]/.well-known/openid-configuration",
		"http://[fd00::1%25lo]/.well-known/openid-configuration",
		"http://[::ffff:127.0.0.1%25lo]" + port + "/.well-known/openid-configuration",
		"http://[::ffff:169.254.169.254%25eth0]/latest/meta-data/",
	}
	for _, u := range zoned {
		if _, err := p.Register(bg, tenantA, &ProviderRegistration{WellKnownConfigURI: strp(u)}); code(err) != apierr.OIDCSSRFBlocked.String() {
			t.Errorf("register %s: %v, want %s", u, err, apierr.OIDCSSRFBlocked)
		}
	}
	// Records written past registration (an older build, a restored
	// backup) are refused by the dialer on every reload.
	now := time.Now()
	for i, u := range zoned[:3] {
		rec := &storage.OIDCProvider{ID: fmt.Sprintf("3b241101-e2bb-4255-8caf-4136c566a96%d", i), Tenant: tenantA,
			WellKnownURI: u, CreatedAt: now, UpdatedAt: now}
		if err := store.CreateProvider(bg, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := p.Refresh(bg); err != nil {
			t.Fatal(err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("loopback discovery server was fetched %d times through a zoned address", n)
	}
}
