package federation

import (
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/internal/await"
	"svc/platform/apierr"
	"svc/platform/netguard/netguardtest"
	"svc/storage"
)

func code(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code.String()
	}
	if err == nil {
		return ""
	}
	return "non-api: " + err.Error()
}

func register(t *testing.T, p *Providers, tenant string, r ProviderRegistration) ProviderView {
	t.Helper()
	v, err := p.Register(bg, tenant, &r)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	return v
}

func TestFederatedTokenMapsTenantUserRoles(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	v := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown()), RolesClaim: strp("realm_access.roles")})
	if !v.Active || v.ID == "" || *v.RolesClaim != "realm_access.roles" {
		t.Fatalf("view: %+v", v)
	}
	// Tenant claims in the token are ignored: the owner tenant binds.
	tok := idp.Token(t, "k1", "alice", jwt.MapClaims{"caas_org_id": tenantB, "tid": tenantB, "caas_user_id": "mallory",
		"realm_access": map[string]any{"roles": []any{"ROLE_ADMIN", "reader", "bad,role", 7}}})
	pr, exp, err := p.Verifier().VerifyExternal(bg, tok)
	if err != nil {
		t.Fatal(err)
	}
	if pr.TenantID != tenantA || pr.UserID != "alice" || pr.Kind != "user" || !slices.Equal(pr.Roles, []string{"ROLE_ADMIN", "reader"}) {
		t.Fatalf("principal: %+v", pr)
	}
	if time.Until(exp) < 4*time.Minute {
		t.Fatalf("exp: %v", exp)
	}
}

func TestRolesClaimShapes(t *testing.T) {
	cases := []struct {
		claim string
		c     jwt.MapClaims
		want  []string
	}{
		{"roles", jwt.MapClaims{"roles": []any{"a", "", "b"}}, []string{"a", "b"}},
		{"roles", jwt.MapClaims{"roles": "a b\tc"}, []string{"a", "b", "c"}},
		{"roles", jwt.MapClaims{"roles": map[string]any{"z": 1, "y": map[string]any{}}}, []string{"y", "z"}},
		{"roles", jwt.MapClaims{"roles": 5}, nil},
		{"cognito:groups", jwt.MapClaims{"cognito:groups": []any{"g"}}, []string{"g"}},
		{"a.b", jwt.MapClaims{"a.b": []any{"literal"}, "a": map[string]any{"b": []any{"nested"}}}, []string{"literal"}},
		{"a.b.c", jwt.MapClaims{"a": map[string]any{"b": map[string]any{"c": []any{"deep"}}}}, []string{"deep"}},
		{"a.b", jwt.MapClaims{"a": "x"}, nil},
	}
	for _, c := range cases {
		if got := rolesFrom(c.c, c.claim); !slices.Equal(got, c.want) {
			t.Errorf("%s %v: %v, want %v", c.claim, c.c, got, c.want)
		}
	}
}

func TestRotationAndNegativeCache(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	ver := p.Verifier()
	if _, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", "alice", nil)); err != nil {
		t.Fatal(err)
	}
	if h := idp.JWKSHits.Load(); h != 1 {
		t.Fatalf("JWKS fetches after first token: %d", h)
	}
	// Cached: no further fetch.
	ver.VerifyExternal(bg, idp.Token(t, "k1", "bob", nil))
	if h := idp.JWKSHits.Load(); h != 1 {
		t.Fatalf("cached key refetched: %d", h)
	}
	// An unknown kid costs one fetch, then is negatively cached.
	stray := sign(t, testKey(t, 3), "nope", idp.Claims("eve", nil))
	for range 3 {
		if _, _, err := ver.VerifyExternal(bg, stray); !errors.Is(err, authcache.ErrNoMatch) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if h := idp.JWKSHits.Load(); h != 2 {
		t.Fatalf("fetches after repeated unknown kid: %d, want 2", h)
	}
	// Rotation: the new kid is picked up by one shared refetch, at once,
	// even with many concurrent verifications.
	idp.Rotate("k2", testKey(t, 1))
	gate := idp.GateJWKS()
	tok := idp.Token(t, "k2", "carol", nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := ver.VerifyExternal(bg, tok)
			errs <- err
		}()
	}
	// The one refetch is held at the IdP while the others pile up on it.
	await.Until(t, await.Long, func() bool { return idp.JWKSHits.Load() >= 3 }, "the refetch reaches the IdP")
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("rotated kid: %v", err)
		}
	}
	if h := idp.JWKSHits.Load(); h != 3 {
		t.Fatalf("fetches after rotation: %d, want exactly one more (single-flight)", h)
	}
}

func TestLifecycleInvalidateReactivateDelete(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	v := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	ver := p.Verifier()
	tok := idp.Token(t, "k1", "alice", nil)
	mustOK := func(step string) {
		t.Helper()
		if _, _, err := ver.VerifyExternal(bg, tok); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	mustNo := func(step string) {
		t.Helper()
		if _, _, err := ver.VerifyExternal(bg, tok); err == nil {
			t.Fatalf("%s: token accepted", step)
		}
	}
	mustOK("registered")
	if err := p.Invalidate(bg, tenantA, v.ID); err != nil {
		t.Fatal(err)
	}
	mustNo("invalidated")
	if err := p.Invalidate(bg, tenantA, v.ID); err != nil {
		t.Fatalf("second invalidate is idempotent: %v", err)
	}
	if _, err := p.Patch(bg, tenantA, v.ID, []byte(`{}`)); code(err) != apierr.OIDCProviderInactive.String() {
		t.Fatalf("patch on invalidated: %v", err)
	}
	if _, err := p.Reactivate(bg, tenantA, v.ID, true); err != nil {
		t.Fatal(err)
	}
	mustOK("reactivated")
	if err := p.Delete(bg, tenantA, v.ID); err != nil {
		t.Fatal(err)
	}
	mustNo("deleted")
	if err := p.Delete(bg, tenantA, v.ID); code(err) != apierr.OIDCProviderNotFound.String() {
		t.Fatalf("second delete: %v", err)
	}
}

func TestHostileFederatedTokens(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown()), ExpectedAudiences: []string{"svc-api"}})
	ver := p.Verifier()
	k := idp.PrivateKey("k1")
	now := time.Now()
	good := jwt.MapClaims{"aud": "svc-api"}
	if _, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", "alice", good)); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, idp.Claims("alice", good))
	hs.Header["kid"] = "k1"
	hsTok, _ := hs.SignedString([]byte(jwkJSON("k1", &k.PublicKey)))
	none := jwt.NewWithClaims(jwt.SigningMethodNone, idp.Claims("alice", good))
	none.Header["kid"] = "k1"
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	valid := idp.Token(t, "k1", "alice", good)
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + strings.TrimRight(parts[1], "A") + "B." + parts[2]
	cases := map[string]string{
		"alg none":            noneTok,
		"HS256 with pub key":  hsTok,
		"expired":             idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "exp": now.Add(-time.Minute).Unix()}),
		"no exp":              idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "exp": nil}),
		"future nbf":          idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "nbf": now.Add(time.Hour).Unix()}),
		"future iat":          idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "iat": now.Add(time.Hour).Unix()}),
		"iat before register": idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "iat": now.Add(-time.Hour).Unix()}),
		"wrong aud":           idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "other"}),
		"missing aud":         idp.Token(t, "k1", "alice", nil),
		"wrong iss":           idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "iss": idp.Issuer + "/"}),
		"sub control char":    idp.Token(t, "k1", "al\x01ice", good),
		"sub too long":        idp.Token(t, "k1", strings.Repeat("x", 256), good),
		"no sub":              idp.Token(t, "k1", "", good),
		"wrong key":           sign(t, testKey(t, 4), "k1", idp.Claims("alice", good)),
		"tampered payload":    tampered,
		"kid injection":       sign(t, k, "../../etc/passwd", idp.Claims("alice", good)),
		"huge header":         sign(t, k, strings.Repeat("k", 20000), idp.Claims("alice", good)),
		"garbage":             "not.a.jwt",
	}
	for name, tok := range cases {
		if pr, _, err := ver.VerifyExternal(bg, tok); err == nil {
			t.Errorf("%s: accepted as %+v", name, pr)
		}
	}
	if _, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", strings.Repeat("x", 255)+"", good)); err != nil {
		t.Errorf("255-char sub: %v", err)
	}
	if _, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", "a:b", good)); err != nil {
		t.Errorf("sub with colon: %v", err)
	}
}

// TestSharedProviderAcceptsEveryTenant (issue 26 item 2): every tenant may
// register the same identity provider, with or without audiences; an
// overlap is logged (audit record and warning), never refused, and each
// token goes to the one registration whose audiences contain its audience,
// 401 when none or several do (docs/decisions/0008-oidc-providers.md).
func TestSharedProviderAcceptsEveryTenant(t *testing.T) {
	const tenantC, tenantD = "3b241101-e2bb-4255-8caf-4136c566a962", "9a1c2f3e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
	idp := newTestIdP(t)
	var logs syncBuffer
	p, _ := newTestProviders(t, idp, func(c *ProvidersConfig) {
		c.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	uri := strp(idp.WellKnown())
	ver := p.Verifier()
	tenantOf := func(aud any) (string, error) {
		t.Helper()
		pr, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", "u", jwt.MapClaims{"aud": aud}))
		if err != nil {
			if errors.Is(err, authcache.ErrNoMatch) {
				t.Fatalf("aud %v: ErrNoMatch, want a hard rejection or a principal", aud)
			}
			return "", err
		}
		return pr.TenantID, nil
	}

	// The first tenant registers the company IdP without audiences: its
	// tokens verify while it is the only registration.
	va := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: uri})
	if got, err := tenantOf("anything"); err != nil || got != tenantA {
		t.Fatalf("sole registration: %q %v", got, err)
	}
	if strings.Contains(logs.String(), "oidc_provider_shared") {
		t.Fatalf("a sole registration was logged as shared: %s", logs.String())
	}
	// The same tenant twice is still a duplicate.
	if _, err := p.Register(bg, tenantA, &ProviderRegistration{WellKnownConfigURI: uri}); code(err) != apierr.OIDCProviderDuplicate.String() {
		t.Fatalf("same tenant twice: %v", err)
	}
	// Other tenants are accepted without audiences, with overlapping ones
	// and with their own; each write is audited, overlaps warned.
	for _, tc := range []struct {
		tenant string
		aud    []string
		warn   bool
	}{
		{tenantB, nil, true},
		{tenantC, []string{"app-c", "app-x"}, true}, // overlaps A and B, which have none
		{tenantD, []string{"app-x"}, true},
	} {
		logs.Reset()
		v := register(t, p, tc.tenant, ProviderRegistration{WellKnownConfigURI: uri, ExpectedAudiences: tc.aud})
		out := logs.String()
		if !strings.Contains(out, `"event":"oidc_provider_shared"`) || !strings.Contains(out, `"provider":"`+v.ID+`"`) || !strings.Contains(out, va.ID) {
			t.Errorf("%s: no audit record naming the registrations: %s", tc.tenant, out)
		}
		if got := strings.Contains(out, `"level":"WARN"`); got != tc.warn {
			t.Errorf("%s: warning %v, want %v: %s", tc.tenant, got, tc.warn, out)
		}
	}
	// Routing: app-c is C's alone; app-x is C's and D's (ambiguous); an
	// audience nobody lists and no audience at all match none.
	if got, err := tenantOf("app-c"); err != nil || got != tenantC {
		t.Fatalf("aud app-c: %q %v", got, err)
	}
	if got, err := tenantOf([]any{"app-c", "other"}); err != nil || got != tenantC {
		t.Fatalf("aud [app-c other]: %q %v", got, err)
	}
	for _, aud := range []any{"app-x", "app-a", nil} {
		if got, err := tenantOf(aud); err == nil {
			t.Fatalf("aud %v routed to %s, want 401 (ambiguous)", aud, got)
		}
	}
	// D moves to its own audience: both route, and the write is audited
	// without a warning against C (A and B still have none).
	vd, err := p.List(bg, tenantD, false)
	if err != nil || len(vd) != 1 {
		t.Fatalf("list D: %v %v", vd, err)
	}
	logs.Reset()
	if _, err := p.Patch(bg, tenantD, vd[0].ID, []byte(`{"expectedAudiences":["app-d"]}`)); err != nil {
		t.Fatalf("patch D: %v", err)
	}
	if out := logs.String(); !strings.Contains(out, `"action":"patch"`) {
		t.Errorf("patch not audited: %s", out)
	}
	for aud, want := range map[string]string{"app-x": tenantC, "app-d": tenantD} {
		if got, err := tenantOf(aud); err != nil || got != want {
			t.Fatalf("after patch, aud %s: %q %v, want %s", aud, got, err, want)
		}
	}
	// Clearing a shared registration's audiences is accepted too.
	if _, err := p.Patch(bg, tenantD, vd[0].ID, []byte(`{"expectedAudiences":null}`)); err != nil {
		t.Fatalf("patch to clear audiences of a shared provider: %v", err)
	}
	if _, err := tenantOf("app-d"); err == nil {
		t.Fatal("aud app-d still routed after D cleared its audiences")
	}
}

// syncBuffer is a log sink tests read while the code under test writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

func TestRegisterValidation(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	uri := idp.WellKnown()
	cases := []struct {
		name   string
		tenant string
		r      ProviderRegistration
		want   string
	}{
		{"no uri", tenantA, ProviderRegistration{}, "BAD_REQUEST"},
		{"http while https required", tenantA, ProviderRegistration{WellKnownConfigURI: strp(strings.Replace(uri, "https:", "http:", 1))}, "BAD_REQUEST"},
		{"ftp", tenantA, ProviderRegistration{WellKnownConfigURI: strp("ftp://x/y")}, "BAD_REQUEST"},
		{"too long", tenantA, ProviderRegistration{WellKnownConfigURI: strp(uri + strings.Repeat("a", 1000))}, "BAD_REQUEST"},
		{"11 issuers", tenantA, ProviderRegistration{WellKnownConfigURI: strp(uri), Issuers: make([]string, 11)}, "BAD_REQUEST"},
		{"empty audience", tenantA, ProviderRegistration{WellKnownConfigURI: strp(uri), ExpectedAudiences: []string{""}}, "BAD_REQUEST"},
		{"long roles claim", tenantA, ProviderRegistration{WellKnownConfigURI: strp(uri), RolesClaim: strp(strings.Repeat("r", 101))}, "BAD_REQUEST"},
		{"default-tenant", "default-tenant", ProviderRegistration{WellKnownConfigURI: strp(uri)}, apierr.OIDCInvalidTenant.String()},
		{"upper-case uuid", strings.ToUpper(tenantA), ProviderRegistration{WellKnownConfigURI: strp(uri)}, apierr.OIDCInvalidTenant.String()},
		{"nil uuid", nilUUID, ProviderRegistration{WellKnownConfigURI: strp(uri)}, apierr.OIDCInvalidTenant.String()},
	}
	for _, c := range cases {
		if _, err := p.Register(bg, c.tenant, &c.r); code(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// TestSSRFRefused: with private networks blocked, registration refuses
// blocked literals and names, and a record that reached the store anyway
// (a name that resolved publicly at registration and to loopback later)
// is never fetched.
func TestSSRFRefused(t *testing.T) {
	idp := newTestIdP(t)
	res := netguardtest.FakeDNS(t, map[string][]netip.Addr{
		"internal.test": {netip.MustParseAddr("10.1.2.3")},
		"rebind.test":   {netip.MustParseAddr("127.0.0.1")},
	})
	p, store := newTestProviders(t, idp, func(c *ProvidersConfig) {
		c.Net.AllowPrivate = false
		c.Net.Resolver = res
	})
	port := idp.Srv.URL[strings.LastIndexByte(idp.Srv.URL, ':'):]
	for _, u := range []string{
		idp.WellKnown(), // loopback
		"https://localhost" + port + "/.well-known/openid-configuration",
		"https://10.0.0.8/.well-known/openid-configuration",
		"https://192.168.10.1/.well-known/openid-configuration",
		"https://169.254.169.254/latest/meta-data/",
		"https://[fd00::1]/.well-known/openid-configuration",
		"https://[fe80::1]/.well-known/openid-configuration",
		"https://[::ffff:127.0.0.1]" + port + "/.well-known/openid-configuration",
		"https://internal.test/.well-known/openid-configuration",
		// IPv6 forms carrying a blocked IPv4 address (issue 23 item 10).
		"https://[::127.0.0.1]" + port + "/.well-known/openid-configuration",
		"https://[2002:7f00:1::]/.well-known/openid-configuration",
		"https://[::ffff:0:127.0.0.1]/.well-known/openid-configuration",
		"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/.well-known/openid-configuration",
		"https://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
		"https://[64:ff9b:1::7f00:1]/.well-known/openid-configuration",
	} {
		if _, err := p.Register(bg, tenantA, &ProviderRegistration{WellKnownConfigURI: strp(u)}); code(err) != apierr.OIDCSSRFBlocked.String() {
			t.Errorf("%s: %v, want %s", u, err, apierr.OIDCSSRFBlocked)
		}
	}
	// DNS rebinding: the record exists; discovery at fetch time is refused
	// by the dialer, so the provider stays pending and nothing is fetched.
	now := time.Now()
	rec := &storage.OIDCProvider{ID: "3b241101-e2bb-4255-8caf-4136c566a962", Tenant: tenantA,
		WellKnownURI: "https://rebind.test" + port + "/.well-known/openid-configuration", CreatedAt: now, UpdatedAt: now}
	if err := store.CreateProvider(bg, rec, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Verifier().VerifyExternal(bg, idp.Token(t, "k1", "alice", nil)); !errors.Is(err, authcache.ErrNoMatch) {
		t.Fatalf("token of a blocked provider: %v", err)
	}
	if idp.DiscHits.Load() != 0 || idp.JWKSHits.Load() != 0 {
		t.Fatalf("blocked provider was contacted: discovery %d, jwks %d", idp.DiscHits.Load(), idp.JWKSHits.Load())
	}
	// A jwks_uri aimed at a private address is refused at fetch time too.
	if _, err := p.fetch.jwks(bg, idp.Srv.URL+"/jwks"); !errors.Is(err, errFetch) || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("private jwks_uri: %v", err)
	}
}

func TestDiscoveryRules(t *testing.T) {
	t.Run("redirect not followed", func(t *testing.T) {
		idp := newTestIdP(t)
		other := newTestIdP(t)
		idp.Redirect = other.WellKnown()
		p, _ := newTestProviders(t, idp, nil)
		register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
		if other.DiscHits.Load() != 0 {
			t.Fatal("redirect followed")
		}
		if _, _, err := p.Verifier().VerifyExternal(bg, idp.Token(t, "k1", "a", nil)); !errors.Is(err, authcache.ErrNoMatch) {
			t.Fatalf("pending provider verified: %v", err)
		}
	})
	t.Run("issuer pin", func(t *testing.T) {
		idp := newTestIdP(t)
		p, _ := newTestProviders(t, idp, nil)
		register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown()), Issuers: []string{"https://elsewhere"}})
		tok := sign(t, idp.PrivateKey("k1"), "k1", idp.Claims("a", jwt.MapClaims{"iss": "https://elsewhere"}))
		if _, _, err := p.Verifier().VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
			t.Fatalf("provider with unpinned issuer verified: %v", err)
		}
		if idp.JWKSHits.Load() != 0 {
			t.Fatal("JWKS of a pending provider fetched")
		}
	})
	t.Run("provider down at registration, reload warms it", func(t *testing.T) {
		idp := newTestIdP(t)
		idp.Discovery = func() string { return `{"issuer":""}` }
		p, _ := newTestProviders(t, idp, nil)
		register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
		tok := idp.Token(t, "k1", "a", nil)
		if _, _, err := p.Verifier().VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
			t.Fatalf("pending: %v", err)
		}
		idp.Discovery = nil
		if err := p.Reload(bg); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.Verifier().VerifyExternal(bg, tok); err != nil {
			t.Fatalf("after reload: %v", err)
		}
		// A reload whose fetch fails keeps the previous document and keys.
		idp.Discovery = func() string { return `garbage` }
		idp.Rotate("k9", testKey(t, 2))
		if err := p.Reload(bg); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.Verifier().VerifyExternal(bg, tok); err != nil {
			t.Fatalf("after failed reload: %v", err)
		}
	})
}

func TestProviderTenantIsolation(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	v := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	if l, _ := p.List(bg, tenantB, false); len(l) != 0 {
		t.Fatalf("B lists A's providers: %v", l)
	}
	if _, err := p.Patch(bg, tenantB, v.ID, []byte(`{"rolesClaim":"x"}`)); code(err) != apierr.OIDCProviderNotFound.String() {
		t.Fatalf("B patches: %v", err)
	}
	if err := p.Invalidate(bg, tenantB, v.ID); code(err) != apierr.OIDCProviderNotFound.String() {
		t.Fatalf("B invalidates: %v", err)
	}
	if _, err := p.Reactivate(bg, tenantB, v.ID, true); code(err) != apierr.OIDCProviderNotFound.String() {
		t.Fatalf("B reactivates: %v", err)
	}
	if err := p.Delete(bg, tenantB, v.ID); code(err) != apierr.OIDCProviderNotFound.String() {
		t.Fatalf("B deletes: %v", err)
	}
	if l, _ := p.List(bg, tenantA, true); len(l) != 1 || l[0].RolesClaim != nil {
		t.Fatalf("A's provider changed: %+v", l)
	}
}

func TestPatchTriState(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	v := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown()),
		Issuers: []string{idp.Issuer}, ExpectedAudiences: []string{"x"}, RolesClaim: strp("groups")})
	got, err := p.Patch(bg, tenantA, v.ID, []byte(`{"expectedAudiences":[],"wellKnownConfigUri":"https://ignored"}`))
	if err != nil || got.ExpectedAudiences != nil || len(got.Issuers) != 1 || *got.RolesClaim != "groups" || got.WellKnownConfigURI != v.WellKnownConfigURI {
		t.Fatalf("clear audiences: %+v %v", got, err)
	}
	got, err = p.Patch(bg, tenantA, v.ID, []byte(`{"rolesClaim":null}`))
	if err != nil || got.RolesClaim != nil || len(got.Issuers) != 1 {
		t.Fatalf("reset roles claim: %+v %v", got, err)
	}
	for _, bad := range []string{`[]`, `{"issuers":"x"}`, `{"rolesClaim":5}`, `nope`} {
		if _, err := p.Patch(bg, tenantA, v.ID, []byte(bad)); code(err) != "BAD_REQUEST" {
			t.Errorf("patch %s: %v", bad, err)
		}
	}
}

// TestUnknownKidFloodIsRateLimited: distinct made-up kids each miss the
// negative cache, but refetches per JWKS URL are rate limited, so a flood
// cannot become one outbound fetch per token.
func TestUnknownKidFloodIsRateLimited(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	ver := p.Verifier()
	good := idp.Token(t, "k1", "alice", nil)
	if _, _, err := ver.VerifyExternal(bg, good); err != nil {
		t.Fatal(err)
	}
	stray := testKey(t, 3)
	for i := range 40 {
		tok := sign(t, stray, "made-up-"+strings.Repeat("x", i), idp.Claims("eve", nil))
		if _, _, err := ver.VerifyExternal(bg, tok); !errors.Is(err, authcache.ErrNoMatch) {
			t.Fatalf("made-up kid %d: %v", i, err)
		}
	}
	if h := idp.JWKSHits.Load(); h > 12 {
		t.Fatalf("%d JWKS fetches for 40 made-up kids", h)
	}
	if _, _, err := ver.VerifyExternal(bg, good); err != nil {
		t.Fatalf("known kid after the flood: %v", err)
	}
}

// TestIatSkewAtRegistration: a token issued up to 30 s before the
// provider was registered is accepted (clock skew), earlier is refused.
func TestIatSkewAtRegistration(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp.WellKnown())})
	now := time.Now()
	if _, _, err := p.Verifier().VerifyExternal(bg, idp.Token(t, "k1", "a", jwt.MapClaims{"iat": now.Add(-10 * time.Second).Unix()})); err != nil {
		t.Fatalf("iat within the skew: %v", err)
	}
	if _, _, err := p.Verifier().VerifyExternal(bg, idp.Token(t, "k1", "a", jwt.MapClaims{"iat": now.Add(-2 * time.Minute).Unix()})); err == nil {
		t.Fatal("iat two minutes before registration accepted")
	}
}

// TestCrossIssuerKeyConfusion: two providers publish the same kid with
// different keys; a token of one carrying the other's issuer is checked
// against the other's key and refused, and each provider's own tokens
// bind to its own tenant.
func TestCrossIssuerKeyConfusion(t *testing.T) {
	idp1, idp2 := newTestIdP(t), newTestIdP(t)
	idp2.Rotate("k1", testKey(t, 1))
	// One client trusting both test servers' certificates.
	p, _ := newTestProviders(t, idp1, func(c *ProvidersConfig) { c.Net.RootCAs.AddCert(idp2.Srv.Certificate()) })
	register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: strp(idp1.WellKnown())})
	register(t, p, tenantB, ProviderRegistration{WellKnownConfigURI: strp(idp2.WellKnown())})
	ver := p.Verifier()
	for idp, want := range map[*testIdP]string{idp1: tenantA, idp2: tenantB} {
		pr, _, err := ver.VerifyExternal(bg, idp.Token(t, "k1", "u", nil))
		if err != nil || pr.TenantID != want {
			t.Fatalf("own token: %+v %v", pr, err)
		}
	}
	forged := sign(t, idp1.PrivateKey("k1"), "k1", idp1.Claims("u", jwt.MapClaims{"iss": idp2.Issuer}))
	if _, _, err := ver.VerifyExternal(bg, forged); err == nil {
		t.Fatal("token of provider 1 accepted under provider 2's issuer")
	}
}

// TestInvalidationDropsKeysKeepsSharedProviderWarm (issue 13 item 2):
// invalidating tenant A's registration of an IdP drops that IdP's cached
// keys; tenant B's registration of the same IdP gets them refetched at
// once, so B's tokens keep verifying without a fetch of their own, and a
// key the IdP stopped publishing is gone for both.
func TestInvalidationDropsKeysKeepsSharedProviderWarm(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := newTestProviders(t, idp, nil)
	uri := strp(idp.WellKnown())
	va := register(t, p, tenantA, ProviderRegistration{WellKnownConfigURI: uri, ExpectedAudiences: []string{"app-a"}})
	register(t, p, tenantB, ProviderRegistration{WellKnownConfigURI: uri, ExpectedAudiences: []string{"app-b"}})
	ver := p.Verifier()
	oldB := idp.Token(t, "k1", "u", jwt.MapClaims{"aud": "app-b"})
	if _, _, err := ver.VerifyExternal(bg, oldB); err != nil {
		t.Fatal(err)
	}
	idp.Rotate("k2", testKey(t, 1))
	newB := idp.Token(t, "k2", "u", jwt.MapClaims{"aud": "app-b"})
	if err := p.Invalidate(bg, tenantA, va.ID); err != nil {
		t.Fatal(err)
	}
	hits := idp.JWKSHits.Load()
	if _, _, err := ver.VerifyExternal(bg, newB); err != nil {
		t.Fatalf("B's token of the current key: %v", err)
	}
	if h := idp.JWKSHits.Load(); h != hits {
		t.Fatalf("B's token needed %d fetches; the keys should have been refetched at the invalidation", h-hits)
	}
	if _, _, err := ver.VerifyExternal(bg, oldB); err == nil {
		t.Fatal("B's token of the key the IdP no longer publishes still verifies")
	}
}
