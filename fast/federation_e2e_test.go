package fast

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/valyala/fasthttp"

	"svc/authcache"
	"svc/iam"
	"svc/iam/federation"
	"svc/iam/federation/federationtest"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
)

// fedJWT is svc in jwt mode on a loopback listener with the whole
// verification chain wired as cmd/svc wires it: own keys → OIDC providers
// → trusted keys, authcache's verified-token cache purged on every
// federation change.
type fedJWT struct {
	*fedServer
	cfg   *config.Config
	cache *authcache.Cache
	tk    *federation.TrustedKeys
	prov  *federation.Providers
}

func startFederatedJWT(t *testing.T) *fedJWT { return startFederatedJWTOn(t, "memory") }

// fedIAMStores are the IAM stores of engine.
func fedIAMStores(t *testing.T, engine string) storage.IAMStores {
	if engine == "postgres" {
		db := newEntityPostgres(t)
		return storage.IAMStores{Clients: db.M2MClients(), Keypairs: db.Keypairs(), TrustedKeys: db.TrustedKeys(), Providers: db.OIDCProviders()}
	}
	if engine == "sqlite" {
		return sqlitetest.Open(t).IAMStores()
	}
	return memory.NewIAMStores()
}

func startFederatedJWTOn(t *testing.T, engine string) *fedJWT {
	t.Helper()
	ctx := context.Background()
	cfg := config.Defaults()
	cfg.IAMMode = "jwt"
	cfg.JWTSigningKey = pemOf(signingKey(t))
	cfg.BootstrapClientID, cfg.BootstrapClientSecret, cfg.BootstrapTenantID = bootID, bootSecret, fedTenantA
	cfg.TrustedKeyRegistrationEnabled = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	st := fedIAMStores(t, engine)
	idp := federationtest.NewIdP(t)
	prov, err := federation.NewProviders(federation.ProvidersConfig{RolesClaim: cfg.OIDCRolesClaim, RequireHTTPS: true, Net: idp.NetOptions(),
		ReconcileInterval: cfg.AuthCacheReconcileInterval}, st.Providers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prov.Close)
	tk := federation.NewTrustedKeys(federation.TrustedConfig{Enabled: true, MaxJWKProps: cfg.TrustedKeyMaxJWKProperties,
		MaxPerTenant: cfg.TrustedKeyMaxPerTenant, Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience,
		ReconcileInterval: cfg.AuthCacheReconcileInterval}, st.TrustedKeys)
	if err := tk.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := prov.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	signing, err := iam.ParseSigningKey(cfg.JWTSigningKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := iam.NewKeys(st.Keypairs, signing, cfg.JWTBootstrapAudience, cfg.KeypairDefaultValidityDays)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	clients := iam.NewClients(st.Clients, cfg.M2MAdminRoleEnabled)
	if err := clients.EnsureBootstrap(ctx, bootID, bootSecret, fedTenantA, cfg.BootstrapUserID, cfg.BootstrapRoles); err != nil {
		t.Fatal(err)
	}
	cache, err := authcache.New(keys, []authcache.External{prov.Verifier(), tk.Verifier()},
		authcache.Options{Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience, ReconcileInterval: cfg.AuthCacheReconcileInterval})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	tk.OnChange(cache.Purge)
	prov.OnChange(cache.Purge)
	s, err := New(cfg, Deps{Auth: HeaderAuth{&authcache.Authenticator{C: cache}}, OIDC: prov, TrustedKeys: tk,
		IAM: &IAMDeps{Clients: clients, Keys: keys, Issuer: iam.NewIssuer(keys, cfg.JWTIssuer, cfg.JWTAudience, cfg.JWTExpirySeconds),
			Subjects: cache, Stale: cache.Stale}})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(sctx, apiLn, adminLn, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fedJWT{fedServer: &fedServer{base: "http://" + apiLn.Addr().String() + cfg.ContextPath, idp: idp, c: &fasthttp.Client{}},
		cfg: cfg, cache: cache, tk: tk, prov: prov}
}

func fedBearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// clientToken gets a client-credentials token of the bootstrap client.
func (f *fedJWT) clientToken(t *testing.T) string {
	t.Helper()
	r := f.form(t, url.Values{"grant_type": {"client_credentials"}})
	tok, _ := r.body["access_token"].(string)
	if r.status != 200 || tok == "" {
		t.Fatalf("client_credentials: %d %s", r.status, r.raw)
	}
	return tok
}

func (f *fedJWT) form(t *testing.T, v url.Values) fedReply {
	t.Helper()
	return f.call(t, "POST", "/oauth/token", "", v.Encode(), "Authorization", basic(bootID, bootSecret),
		"Content-Type", "application/x-www-form-urlencoded")
}

// TestFederatedEndToEnd: over real HTTP with the real chain, an admin of
// tenant A registers a trusted key and an OIDC provider with svc-issued
// tokens; then a token signed by the trusted key and a token of the
// provider each call authenticated routes and act for tenant A; a
// federated token is exchanged at the token endpoint; revocations apply
// at once despite the verified-token cache.
func TestFederatedEndToEnd(t *testing.T) {
	t.Parallel()
	f := startFederatedJWT(t)
	admin := f.clientToken(t)
	partner := federationtest.Key(2)
	jwk := federationtest.JWK("partner-1", &partner.PublicKey)
	if r := f.call(t, "POST", "/oauth/keys/trusted", "", `{"keyId":"partner-1","jwk":`+jwk+`}`, fedBearer(admin)...); r.status != 200 {
		t.Fatalf("register trusted key: %d %s", r.status, r.raw)
	}
	r := f.call(t, "POST", "/oauth/oidc/providers", "", `{"wellKnownConfigUri":"`+f.idp.WellKnown()+`","expectedAudiences":["svc-api"],"rolesClaim":"realm_access.roles"}`, fedBearer(admin)...)
	if r.status != 200 {
		t.Fatalf("register provider: %d %s", r.status, r.raw)
	}
	providerID := r.body["id"].(string)

	now := time.Now()
	trustedTok := federationtest.Sign(t, partner, "partner-1", jwt.MapClaims{"iss": f.cfg.JWTIssuer, "sub": "ops", "caas_org_id": fedTenantA,
		"caas_user_id": "ops", "user_roles": []string{iam.RoleAdmin}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	r = f.call(t, "GET", "/oauth/keys/trusted", "", "", fedBearer(trustedTok)...)
	if r.status != 200 || len(r.list) != 1 {
		t.Fatalf("trusted-key token on an authenticated route: %d %s", r.status, r.raw)
	}
	fedTok := f.idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "caas_org_id": fedTenantB,
		"realm_access": map[string]any{"roles": []any{iam.RoleAdmin}}})
	r = f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(fedTok)...)
	if r.status != 200 || len(r.list) != 1 || r.list[0].(map[string]any)["id"] != providerID {
		t.Fatalf("federated token on an authenticated route: %d %s", r.status, r.raw)
	}
	// Twice more: the second answer comes from the verified-token cache.
	for range 2 {
		if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(fedTok)...); r.status != 200 {
			t.Fatalf("cached federated token: %d", r.status)
		}
	}
	// Without the admin role the federated user still lists (docs/decisions/0008-oidc-providers.md),
	// but cannot change the registrations.
	bob := f.idp.Token(t, "k1", "bob", jwt.MapClaims{"aud": "svc-api"})
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(bob)...); r.status != 200 || len(r.list) != 1 {
		t.Fatalf("federated token without the admin role lists: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers/reload", "", "", fedBearer(bob)...); r.status != 403 {
		t.Fatalf("federated token without the admin role reloads: %d %s", r.status, r.raw)
	}

	// Token exchange: the federated user's token becomes an on-behalf-of
	// token of the bootstrap client (same tenant: the provider's owner).
	r = f.form(t, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {fedTok},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:jwt"}})
	obo, _ := r.body["access_token"].(string)
	if r.status != 200 || obo == "" {
		t.Fatalf("exchange a federated token: %d %s", r.status, r.raw)
	}
	if _, c := claimsOf(t, obo); c["sub"] != "alice" || c["caas_org_id"] != fedTenantA {
		t.Fatalf("on-behalf-of claims: %v", c)
	}

	for name, tok := range map[string]string{
		"wrong audience":       f.idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "other"}),
		"unknown kid":          federationtest.Sign(t, federationtest.Key(4), "nope", f.idp.Claims("alice", jwt.MapClaims{"aud": "svc-api"})),
		"trusted, wrong org":   federationtest.Sign(t, partner, "partner-1", jwt.MapClaims{"iss": f.cfg.JWTIssuer, "sub": "x", "caas_org_id": fedTenantB, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}),
		"provider key, no exp": f.idp.Token(t, "k1", "alice", jwt.MapClaims{"aud": "svc-api", "exp": nil}),
	} {
		if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(tok)...); r.status != 401 || fedErrCode(r) != "UNAUTHORIZED" {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}

	// Revocation beats the verified-token cache.
	if r := f.call(t, "POST", "/oauth/oidc/providers/"+providerID+"/invalidate", "", "", fedBearer(admin)...); r.status != 200 {
		t.Fatalf("invalidate provider: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(fedTok)...); r.status != 401 {
		t.Fatalf("token of an invalidated provider: %d", r.status)
	}
	if r := f.call(t, "POST", "/oauth/keys/trusted/partner-1/invalidate", "", "", fedBearer(admin)...); r.status != 200 {
		t.Fatalf("invalidate trusted key: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/keys/trusted", "", "", fedBearer(trustedTok)...); r.status != 401 {
		t.Fatalf("token of an invalidated trusted key: %d", r.status)
	}
	if !strings.HasPrefix(admin, "ey") {
		t.Fatal("client token is not a JWT")
	}
}

// TestProviderPublishingOwnKidDoesNotBreakFirstParty: a malicious provider
// publishing svc's own kid cannot make its tokens pass as first-party, and
// svc's tokens keep working.
func TestProviderPublishingOwnKidDoesNotBreakFirstParty(t *testing.T) {
	t.Parallel()
	f := startFederatedJWT(t)
	admin := f.clientToken(t)
	hdr, _ := claimsOf(t, admin)
	ownKid := hdr["kid"].(string)
	f.idp.Rotate(ownKid, federationtest.Key(3))
	if r := f.call(t, "POST", "/oauth/oidc/providers", "", `{"wellKnownConfigUri":"`+f.idp.WellKnown()+`"}`, fedBearer(admin)...); r.status != 200 {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	forged := federationtest.Sign(t, federationtest.Key(3), ownKid, jwt.MapClaims{"iss": f.cfg.JWTIssuer, "sub": "x", "caas_org_id": fedTenantA,
		"user_roles": []string{iam.RoleAdmin}, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(forged)...); r.status != 401 {
		t.Fatalf("token signed by the provider under svc's kid: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(admin)...); r.status != 200 {
		t.Fatalf("first-party token after the provider published svc's kid: %d %s", r.status, r.raw)
	}
}

// TestProviderInvalidationDropsItsKeys (issue 13 item 2, docs/decisions/0008-oidc-providers.md):
// the IdP stops publishing the key a token was signed with while svc still
// holds it in its JWKS cache and its verified-token cache. After
// invalidate, and after a reactivate with reactivateKeys:false, that token
// gets 401 while a token of the key now published verifies; on both
// engines holding the registrations.
func TestProviderInvalidationDropsItsKeys(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			f := startFederatedJWTOn(t, engine)
			admin := f.clientToken(t)
			r := f.call(t, "POST", "/oauth/oidc/providers", "", `{"wellKnownConfigUri":"`+f.idp.WellKnown()+`"}`, fedBearer(admin)...)
			if r.status != 200 {
				t.Fatalf("register provider: %d %s", r.status, r.raw)
			}
			id := r.body["id"].(string)
			old := f.idp.Token(t, "k1", "alice", nil)
			list := func(tok string) int {
				return f.call(t, "GET", "/oauth/oidc/providers", "", "", fedBearer(tok)...).status
			}
			if s := list(old); s != 200 {
				t.Fatalf("k1 token while k1 is published: %d", s)
			}
			f.idp.Rotate("k2", federationtest.Key(1))
			fresh := f.idp.Token(t, "k2", "bob", nil)
			if s := list(old); s != 200 {
				// Within the JWKS TTL a rotated-out key still verifies;
				// the point below is what invalidation changes.
				t.Fatalf("k1 token right after the rotation (cached key): %d", s)
			}
			for _, step := range []struct{ path, body string }{
				{"/invalidate", ""}, {"/reactivate", `{"reactivateKeys":false}`},
				{"/invalidate", ""}, {"/reactivate", `{"reactivateKeys":true}`},
			} {
				if r := f.call(t, "POST", "/oauth/oidc/providers/"+id+step.path, "", step.body, fedBearer(admin)...); r.status != 200 {
					t.Fatalf("%s: %d %s", step.path, r.status, r.raw)
				}
				if s := list(old); s != 401 {
					t.Fatalf("after %s %s: token of a key the provider no longer publishes: %d, want 401", step.path, step.body, s)
				}
				want := 200
				if step.path == "/invalidate" {
					want = 401
				}
				if s := list(fresh); s != want {
					t.Fatalf("after %s %s: token of the published key: %d, want %d", step.path, step.body, s, want)
				}
			}
		})
	}
}
