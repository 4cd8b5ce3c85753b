package federation

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"svc/platform/netguard"
)

func tlsFetcher(srv *httptest.Server) *fetcher {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &fetcher{requireHTTPS: true, client: netguard.NewClient(netguard.Options{AllowPrivate: true, RootCAs: pool,
		ConnectTimeout: 5 * time.Second, PoolTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second})}
}

func TestJWKSFetchRules(t *testing.T) {
	good := `{"keys":[` + jwkJSON("k", &testKey(t, 0).PublicKey) + `]}`
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(good))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(good))
		case "/500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"keys":[],"pad":"` + strings.Repeat("x", maxBody) + `"}`))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
		}
	}))
	defer srv.Close()
	f := tlsFetcher(srv)
	keys, err := f.jwks(bg, srv.URL+"/ok")
	if err != nil || keys["k"] == nil {
		t.Fatalf("ok: %v %v", keys, err)
	}
	for _, path := range []string{"/html", "/500", "/big", "/redirect"} {
		if _, err := f.jwks(bg, srv.URL+path); !errors.Is(err, errFetch) {
			t.Errorf("%s: %v", path, err)
		}
	}
	if _, err := f.jwks(bg, strings.Replace(srv.URL, "https:", "http:", 1)+"/ok"); !errors.Is(err, errFetch) {
		t.Errorf("plain http jwks_uri with https required: %v", err)
	}
}

func TestTLS12OnlyServerRefused(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"keys":[]}`))
	}))
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	if _, err := tlsFetcher(srv).jwks(bg, srv.URL); !errors.Is(err, errFetch) {
		t.Fatalf("TLS 1.2 server: %v", err)
	}
}
