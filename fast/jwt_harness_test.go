package fast

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/golang-jwt/jwt/v5"

	"svc/authcache"
	"svc/iam"
	"svc/internal/testkeys"
	"svc/platform/config"
	"svc/storage"
	"svc/storage/memory"
)

// signingKey is the svc signing key of every harness: a fixed test key, not
// one of federationtest's IdP keys (generation costs seconds under -race).
func signingKey(t testing.TB) *rsa.PrivateKey { return testkeys.RSA(5) }

func pemOf(k *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

const (
	bootID     = "bootclient"
	bootSecret = "boot-secret-0123456789"
	tenantA    = "tenant-a"
	tenantB    = "tenant-b"
)

// jwtHarness is svc in jwt mode on a real loopback listener, wired the way
// cmd/svc wires it, over in-memory stores.
type jwtHarness struct {
	t      testing.TB
	base   string // http://127.0.0.1:port/api
	key    *rsa.PrivateKey
	kid    string
	cfg    *config.Config
	stores storage.IAMStores
	keys   *iam.Keys
	cache  *authcache.Cache
	http   *http.Client
	srv    *Server
}

func newJWTHarness(t testing.TB, mutate ...func(*config.Config)) *jwtHarness {
	t.Helper()
	key := signingKey(t)
	cfg := config.Defaults()
	cfg.IAMMode = "jwt"
	cfg.JWTSigningKey = pemOf(key)
	cfg.BootstrapClientID, cfg.BootstrapClientSecret = bootID, bootSecret
	cfg.BootstrapTenantID = tenantA
	for _, m := range mutate {
		m(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx := context.Background()
	st := memory.NewIAMStores()
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
	if err := clients.EnsureBootstrap(ctx, bootID, bootSecret, cfg.BootstrapTenantID, cfg.BootstrapUserID, cfg.BootstrapRoles); err != nil {
		t.Fatal(err)
	}
	cache, err := authcache.New(keys, nil, authcache.Options{Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience,
		ReconcileInterval: cfg.AuthCacheReconcileInterval, Revocations: st.Revocations})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	s, err := New(cfg, Deps{Auth: HeaderAuth{&authcache.Authenticator{C: cache}}, IAM: &IAMDeps{Clients: clients, Keys: keys,
		Issuer: iam.NewIssuer(keys, cfg.JWTIssuer, cfg.JWTAudience, cfg.JWTExpirySeconds), Subjects: cache, Stale: cache.Stale,
		Tokens: cache}})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(sctx, apiLn, adminLn, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	h := &jwtHarness{t: t, base: "http://" + apiLn.Addr().String() + cfg.ContextPath, key: key, kid: keys.BootstrapKID(),
		cfg: cfg, stores: st, keys: keys, cache: cache, http: &http.Client{Timeout: 10 * time.Second}, srv: s}
	return h
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func (h *jwtHarness) do(method, path, bearer string, body io.Reader, hdr ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// token posts a form to the token endpoint with Basic client auth.
func (h *jwtHarness) token(id, secret string, form url.Values) reply {
	h.t.Helper()
	return h.do("POST", "/oauth/token", "", strings.NewReader(form.Encode()),
		"Authorization", basic(id, secret), "Content-Type", "application/x-www-form-urlencoded")
}

func (h *jwtHarness) clientToken(id, secret string) string {
	h.t.Helper()
	r := h.token(id, secret, url.Values{"grant_type": {"client_credentials"}})
	if r.status != 200 {
		h.t.Fatalf("client_credentials for %s: %d %s", id, r.status, r.body)
	}
	return r.json(h.t)["access_token"].(string)
}

// mint signs claims offline with the configured key under the bootstrap
// kid, as an external test harness does (docs/decisions/0006-tokens-keypairs-clients.md).
func (h *jwtHarness) mint(claims jwt.MapClaims) string {
	h.t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = h.kid
	s, err := tok.SignedString(h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// adminClaims are valid first-party claims of an administrator of tenant.
func (h *jwtHarness) adminClaims(tenant string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": "admin-" + tenant, "iss": h.cfg.JWTIssuer, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": "j-" + tenant, "caas_org_id": tenant, "caas_user_id": "admin-" + tenant, "user_roles": []string{iam.RoleAdmin},
		"caas_tier": "unlimited"}
	if h.cfg.JWTAudience != "" {
		c["aud"] = h.cfg.JWTAudience
	}
	return c
}

// claimsOf decodes a JWT's header and payload without verifying.
func claimsOf(t testing.TB, tok string) (hdr, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	for i, dst := range []*map[string]any{&hdr, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatal(err)
		}
	}
	return hdr, claims
}
