package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"svc/platform/netguard/netguardtest"
)

func opts(r *net.Resolver) Options {
	return Options{ConnectTimeout: 2 * time.Second, PoolTimeout: time.Second, ReadTimeout: 2 * time.Second, Resolver: r, MinTLS: 0}
}

func TestBlockedRanges(t *testing.T) {
	cases := []struct {
		ip      string
		blocked bool
	}{
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"172.31.255.255", true}, {"192.168.1.1", true}, {"169.254.169.254", true}, {"100.64.0.1", true},
		{"0.0.0.0", true}, {"224.0.0.1", true}, {"255.255.255.255", true},
		{"::1", true}, {"::", true}, {"fc00::1", true}, {"fd12:3456::1", true}, {"fe80::1", true}, {"ff02::1", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true}, {"::ffff:169.254.169.254", true}, {"64:ff9b::a00:1", true},
		{"8.8.8.8", false}, {"172.32.0.1", false}, {"100.128.0.1", false}, {"::ffff:8.8.8.8", false},
		{"2606:4700:4700::1111", false}, {"1.1.1.1", false},
		// Zoned forms: netip's Prefix.Contains never matches a zoned address,
		// so each of these was allowed before zones were refused.
		{"::1%lo", true}, {"::1%eth0", true}, {"::1%1", true},
		{"fe80::1%eth0", true}, {"fe80::1%2", true}, {"fd00::1%lo", true}, {"fc00::1%eth0", true},
		{"::ffff:127.0.0.1%lo", true}, {"::ffff:10.0.0.1%eth0", true}, {"::ffff:169.254.169.254%1", true},
		{"::%lo", true}, {"ff02::1%eth0", true},
		// A zone has no meaning for a public destination either.
		{"2606:4700:4700::1111%eth0", true},
	}
	for _, c := range cases {
		if got := Blocked(netip.MustParseAddr(c.ip)); got != c.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", c.ip, got, c.blocked)
		}
	}
}

// TestDialTimeRefusal drives real requests through the guarded client: each
// destination must fail with ErrBlocked before any connection is made.
func TestDialTimeRefusal(t *testing.T) {
	// A live loopback server proves the refusal is the guard, not a dead port.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	// A live IPv6 loopback server makes the zoned ::1 forms reach something
	// when the guard lets them through (the IPv4 server is not on ::1).
	port6 := port
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		srv6 := httptest.NewUnstartedServer(srv.Config.Handler)
		srv6.Listener.Close()
		srv6.Listener = ln
		srv6.Start()
		defer srv6.Close()
		port6 = srv6.URL[strings.LastIndexByte(srv6.URL, ':')+1:]
	}
	res := netguardtest.FakeDNS(t, map[string][]netip.Addr{
		"private.test": {netip.MustParseAddr("10.0.0.7")},
		"loop.test":    {netip.MustParseAddr("127.0.0.1")},
		"meta.test":    {netip.MustParseAddr("169.254.169.254")},
		"ula.test":     {netip.MustParseAddr("fd00::1")},
		"mapped.test":  {netip.MustParseAddr("::ffff:127.0.0.1")},
	})
	c := NewClient(opts(res))
	for _, u := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://10.0.0.1/",
		"http://192.168.0.1/",
		"http://172.16.5.5/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00::1]/",
		"http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://private.test/",
		"http://loop.test:" + port + "/",
		"http://meta.test/",
		"http://ula.test/",
		"http://mapped.test:" + port + "/",
		// Zoned literals of the live loopback server and of scoped ranges.
		"http://[::1%25lo]:" + port6 + "/",
		"http://[::1%25eth0]:" + port6 + "/",
		"http://[::1%251]:" + port6 + "/",
		"http://[::ffff:127.0.0.1%25lo]:" + port + "/",
		"http://[fe80::1%25lo]:" + port + "/",
		"http://[fd00::1%25lo]/",
		// IPv6 forms that carry a blocked IPv4 address.
		"http://[::127.0.0.1]:" + port + "/",
		"http://[2002:7f00:1::]:" + port + "/",
		"http://[64:ff9b::7f00:1]:" + port + "/",
		"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:" + port + "/",
	} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: fetched (status %d), want refusal", u, resp.StatusCode)
			continue
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v, want ErrBlocked", u, err)
		}
	}
	// The same loopback server is reachable when private networks are allowed.
	o := opts(res)
	o.AllowPrivate = true
	resp, err := NewClient(o).Get(srv.URL)
	if err != nil {
		t.Fatalf("allow-private: %v", err)
	}
	resp.Body.Close()
}

func TestRedirectNotFollowed(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("redirect target reached")
	}))
	defer target.Close()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	}))
	defer src.Close()
	o := opts(nil)
	o.AllowPrivate = true
	resp, err := NewClient(o).Get(src.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want the 302 itself", resp.StatusCode)
	}
}

func TestCheckHost(t *testing.T) {
	res := netguardtest.FakeDNS(t, map[string][]netip.Addr{
		"mixed.test":  {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.1")},
		"public.test": {netip.MustParseAddr("8.8.8.8")},
	})
	o := opts(res)
	ctx := context.Background()
	for _, h := range []string{"127.0.0.1", "169.254.169.254", "fc00::5", "mixed.test", "::ffff:192.168.1.1",
		"::1%lo", "::1%eth0", "::1%1", "fe80::1%eth0", "fd00::1%lo", "::ffff:127.0.0.1%lo"} {
		if err := CheckHost(ctx, o, h); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v, want ErrBlocked", h, err)
		}
	}
	if err := CheckHost(ctx, o, "public.test"); err != nil {
		t.Errorf("public.test: %v", err)
	}
	if err := CheckHost(ctx, o, "nx.test"); err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("unresolvable: %v, want a resolution error", err)
	}
	o.AllowPrivate = true
	if err := CheckHost(ctx, o, "127.0.0.1"); err != nil {
		t.Errorf("allow-private: %v", err)
	}
}

// TestEmbeddedIPv4JudgedByCarriedAddress: every IPv6 form that carries an
// IPv4 address is refused exactly when the IPv4 address it carries is, at
// registration (CheckHost) and at dial time (the dialer's Control hook).
func TestEmbeddedIPv4JudgedByCarriedAddress(t *testing.T) {
	cases := []struct {
		form, ip string
		blocked  bool
	}{
		{"IPv4-compatible loopback", "::127.0.0.1", true},
		{"IPv4-compatible private", "::10.1.2.3", true},
		{"IPv4-compatible metadata", "::169.254.169.254", true},
		{"IPv4-compatible public", "::8.8.8.8", false},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true},
		{"IPv4-mapped public", "::ffff:8.8.8.8", false},
		{"IPv4-translated loopback", "::ffff:0:127.0.0.1", true},
		{"IPv4-translated public", "::ffff:0:8.8.8.8", false},
		{"6to4 loopback", "2002:7f00:1::", true},
		{"6to4 metadata", "2002:a9fe:a9fe::1", true},
		{"6to4 private", "2002:c0a8:101:1::5", true},
		{"6to4 public", "2002:808:808::1", false},
		{"Teredo client loopback (inverted)", "2001:0:4136:e378:8000:63bf:80ff:fffe", true},
		{"Teredo client private (inverted)", "2001:0:4136:e378:8000:63bf:f5ff:fffe", true},
		{"Teredo server private", "2001:0:a00:1:8000:63bf:f7f7:f7f7", true},
		{"Teredo server and client public", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", false},
		{"NAT64 well-known loopback", "64:ff9b::7f00:1", true},
		{"NAT64 well-known metadata", "64:ff9b::a9fe:a9fe", true},
		{"NAT64 well-known public", "64:ff9b::808:808", false},
		{"NAT64 local-use /96 loopback", "64:ff9b:1::7f00:1", true},
		{"NAT64 local-use /48 loopback", "64:ff9b:1:7f00:0:100::", true},
		{"NAT64 local-use /64 private", "64:ff9b:1:0:a:0:100::", true},
		{"NAT64 local-use public in every reading", "64:ff9b:1:808:8:808:808:808", false},
		{"plain public IPv6", "2606:4700:4700::1111", false},
		{"plain public IPv6 beside Teredo", "2001:4860:4860::8888", false},
	}
	ctrl := control(false)
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.form, func(t *testing.T) {
			ip := netip.MustParseAddr(c.ip)
			if got := Blocked(ip); got != c.blocked {
				t.Errorf("Blocked(%s) = %v, want %v", c.ip, got, c.blocked)
			}
			regErr := CheckHost(ctx, Options{}, c.ip)
			dialErr := ctrl("tcp", netip.AddrPortFrom(ip, 443).String(), nil)
			for stage, err := range map[string]error{"registration": regErr, "dial": dialErr} {
				if c.blocked && !errors.Is(err, ErrBlocked) {
					t.Errorf("%s %s: %v, want ErrBlocked", stage, c.ip, err)
				}
				if !c.blocked && err != nil {
					t.Errorf("%s %s: %v, want allowed", stage, c.ip, err)
				}
			}
		})
	}
}
