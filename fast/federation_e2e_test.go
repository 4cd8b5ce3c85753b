package fast

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"
	"github.com/valyala/fasthttp"

	"svc/authcache"
	"svc/config"
	"svc/iam"
	"svc/iam/federation"
	"svc/iam/federation/federationtest"
	"svc/storage/memory"
)

// externalChainAuth is a test double of the authcache chain restricted to
// its federated links: bearer token → providers → trusted keys, moving on
// only on ErrNoMatch. It stands in until the jwt authenticator of the iam
// branch is merged.
type externalChainAuth struct{ links []authcache.External }

var errNoToken = errors.New("no bearer token")

func (a externalChainAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	h := string(ctx.Request.Header.Peek("Authorization"))
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return nil, errNoToken
	}
	for _, l := range a.links {
		p, _, err := l.VerifyExternal(ctx, tok)
		if errors.Is(err, authcache.ErrNoMatch) {
			continue
		}
		return p, err
	}
	return nil, authcache.ErrNoMatch
}

// TestFederatedTokensOverHTTP: a trusted-key token registers an OIDC
// provider, then that provider's tokens call an authenticated route and
// act for the provider's owner tenant with the roles of their claim.
func TestFederatedTokensOverHTTP(t *testing.T) {
	cfg := config.Defaults()
	cfg.TrustedKeyRegistrationEnabled = true
	idp := federationtest.NewIdP(t)
	st := memory.NewIAMStores()
	prov, err := federation.NewProviders(federation.ProvidersConfig{RolesClaim: "roles", RequireHTTPS: true, Net: idp.NetOptions()}, st.Providers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prov.Close)
	tk := federation.NewTrustedKeys(federation.TrustedConfig{Enabled: true, MaxJWKProps: 20, Issuer: cfg.JWTIssuer}, st.TrustedKeys)
	partner := federationtest.Key(2)
	if _, err := tk.Register(context.Background(), tA, &federation.TrustedKeyRegistration{KeyID: "partner-1",
		JWK: json.RawMessage(federationtest.JWK("partner-1", &partner.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: externalChainAuth{[]authcache.External{prov.Verifier(), tk.Verifier()}}, OIDC: prov, TrustedKeys: tk})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	f := &fedServer{base: "http://" + apiLn.Addr().String() + cfg.ContextPath, idp: idp, c: &fasthttp.Client{}}
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	now := time.Now()
	adminTok := federationtest.Sign(t, partner, "partner-1", jwt.MapClaims{"iss": cfg.JWTIssuer, "sub": "ops", "caas_org_id": tA,
		"user_roles": []string{iam.RoleAdmin}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	r := f.call(t, "POST", "/oauth/oidc/providers", "", `{"wellKnownConfigUri":"`+idp.WellKnown()+`","rolesClaim":"realm_access.roles"}`, bearer(adminTok)...)
	if r.status != 200 {
		t.Fatalf("register with a trusted-key token: %d %s", r.status, r.raw)
	}
	id := r.body["id"]

	// The federated token claims another tenant; the owner tenant binds.
	fedTok := idp.Token(t, "k1", "alice", jwt.MapClaims{"caas_org_id": tB,
		"realm_access": map[string]any{"roles": []any{iam.RoleAdmin}}})
	r = f.call(t, "GET", "/oauth/oidc/providers", "", "", bearer(fedTok)...)
	if r.status != 200 || len(r.list) != 1 || r.list[0].(map[string]any)["id"] != id {
		t.Fatalf("list with a federated token: %d %s", r.status, r.raw)
	}
	r = f.call(t, "GET", "/oauth/keys/trusted", "", "", bearer(fedTok)...)
	if r.status != 200 || len(r.list) != 1 {
		t.Fatalf("trusted keys of the owner tenant via a federated token: %d %s", r.status, r.raw)
	}
	noRole := idp.Token(t, "k1", "bob", nil)
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", bearer(noRole)...); r.status != 403 {
		t.Fatalf("federated token without the admin role: %d %s", r.status, r.raw)
	}
	for name, tok := range map[string]string{
		"no token":      "",
		"garbage":       "a.b.c",
		"expired":       idp.Token(t, "k1", "alice", jwt.MapClaims{"exp": now.Add(-time.Hour).Unix()}),
		"unknown kid":   federationtest.Sign(t, federationtest.Key(4), "zzz", idp.Claims("alice", nil)),
		"trusted wrong": federationtest.Sign(t, partner, "partner-1", jwt.MapClaims{"iss": cfg.JWTIssuer, "sub": "ops", "caas_org_id": tB, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}),
	} {
		var hdr []string
		if tok != "" {
			hdr = bearer(tok)
		}
		if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", hdr...); r.status != 401 || errCode(r) != "UNAUTHORIZED" {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	// Invalidating the provider stops its tokens at once.
	if r := f.call(t, "POST", "/oauth/oidc/providers/"+id.(string)+"/invalidate", "", "", bearer(adminTok)...); r.status != 200 {
		t.Fatalf("invalidate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", bearer(fedTok)...); r.status != 401 {
		t.Fatalf("token of an invalidated provider: %d", r.status)
	}
}
