package fast

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/iam/federation"
	"svc/iam/federation/federationtest"
	"svc/platform/config"
	"svc/storage/memory"
)

// fedHeaderAuth is a test double authenticator: the principal's tenant comes
// from X-Test-Tenant and its roles from X-Test-Roles (default ROLE_ADMIN).
// The real jwt authenticator is exercised in the end-to-end test.
type fedHeaderAuth struct{}

func (fedHeaderAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	tenant := string(ctx.Request.Header.Peek("X-Test-Tenant"))
	roles := []string{iam.RoleAdmin}
	if r := ctx.Request.Header.Peek("X-Test-Roles"); r != nil {
		roles = strings.Split(string(r), ",")
	}
	return &iam.Principal{Kind: "user", UserID: "u-" + tenant, TenantID: tenant, Roles: roles}, nil
}

type fedServer struct {
	base string
	idp  *federationtest.IdP
	c    *fasthttp.Client
}

// startFederation serves fast.New over a loopback listener with the
// federation services over in-memory stores and a local TLS IdP.
func startFederation(t *testing.T, trustedEnabled bool) *fedServer {
	t.Helper()
	cfg := config.Defaults()
	cfg.TrustedKeyRegistrationEnabled = trustedEnabled
	idp := federationtest.NewIdP(t)
	st := memory.NewIAMStores()
	prov, err := federation.NewProviders(federation.ProvidersConfig{RolesClaim: "roles", RequireHTTPS: true, Net: idp.NetOptions()}, st.Providers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prov.Close)
	tk := federation.NewTrustedKeys(federation.TrustedConfig{Enabled: trustedEnabled, MaxJWKProps: 20, MaxPerTenant: 10, Issuer: "svc"}, st.TrustedKeys)
	s, err := New(cfg, Deps{Auth: fedHeaderAuth{}, OIDC: prov, TrustedKeys: tk})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fedServer{base: "http://" + apiLn.Addr().String() + cfg.ContextPath, idp: idp, c: &fasthttp.Client{}}
}

type fedReply struct {
	status int
	body   map[string]any
	list   []any
	raw    string
}

func (f *fedServer) call(t *testing.T, method, path, tenant, body string, hdr ...string) fedReply {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(f.base + path)
	req.Header.Set("X-Test-Tenant", tenant)
	if body != "" {
		req.Header.SetContentType("application/json")
		req.SetBodyString(body)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if err := f.c.DoTimeout(req, resp, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r := fedReply{status: resp.StatusCode(), raw: string(resp.Body())}
	if strings.HasPrefix(r.raw, "[") {
		r.list, _ = fedDecodeList(resp.Body())
	} else if len(resp.Body()) > 0 {
		r.body = decode(t, resp.Body())
	}
	return r
}

func fedDecodeList(b []byte) ([]any, error) {
	var l []any
	err := json.Unmarshal(b, &l)
	return l, err
}

func fedErrCode(r fedReply) string {
	if p, ok := r.body["properties"].(map[string]any); ok {
		s, _ := p["errorCode"].(string)
		return s
	}
	return ""
}

const (
	fedTenantA = "0f8fad5b-d9cb-469f-a165-70867728950e"
	fedTenantB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

func TestTrustedKeysDisabledOverHTTP(t *testing.T) {
	t.Parallel()
	f := startFederation(t, false)
	for _, op := range [][2]string{{"GET", "/oauth/keys/trusted"}, {"POST", "/oauth/keys/trusted"}, {"DELETE", "/oauth/keys/trusted/k1"},
		{"POST", "/oauth/keys/trusted/k1/invalidate"}, {"POST", "/oauth/keys/trusted/k1/reactivate"}} {
		r := f.call(t, op[0], op[1], fedTenantA, "")
		if r.status != 404 || fedErrCode(r) != "FEATURE_DISABLED" {
			t.Errorf("%v: %d %s", op, r.status, r.raw)
		}
	}
	// The admin check still comes first.
	if r := f.call(t, "GET", "/oauth/keys/trusted", fedTenantA, "", "X-Test-Roles", "ROLE_M2M"); r.status != 403 {
		t.Errorf("non-admin: %d", r.status)
	}
}

func TestTrustedKeysOverHTTP(t *testing.T) {
	t.Parallel()
	f := startFederation(t, true)
	jwk := federationtest.JWK("k1", &federationtest.Key(0).PublicKey)
	r := f.call(t, "POST", "/oauth/keys/trusted", fedTenantA, `{"keyId":"k1","jwk":`+jwk+`,"audience":"client","issuers":[]}`)
	if r.status != 200 || r.body["keyId"] != "k1" || r.body["legalEntityId"] != fedTenantA || r.body["active"] != true {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	if iss, ok := r.body["issuers"].([]any); !ok || len(iss) != 0 {
		t.Fatalf("issuers [] not echoed: %s", r.raw)
	}
	if r := f.call(t, "GET", "/oauth/keys/trusted", fedTenantA, ""); r.status != 200 || len(r.list) != 1 {
		t.Fatalf("A lists: %d %s", r.status, r.raw)
	}
	// Tenant isolation: B neither sees nor changes A's key.
	if r := f.call(t, "GET", "/oauth/keys/trusted", fedTenantB, ""); r.status != 200 || r.raw != "[]" {
		t.Fatalf("B lists: %d %s", r.status, r.raw)
	}
	for _, op := range [][3]string{{"DELETE", "/oauth/keys/trusted/k1", ""}, {"POST", "/oauth/keys/trusted/k1/invalidate", ""},
		{"POST", "/oauth/keys/trusted/k1/reactivate", `{"validTo":"2099-01-01T00:00:00Z"}`}} {
		if r := f.call(t, op[0], op[1], fedTenantB, op[2]); r.status != 404 || fedErrCode(r) != "TRUSTED_KEY_NOT_FOUND" {
			t.Errorf("B %v: %d %s", op, r.status, r.raw)
		}
	}
	if r := f.call(t, "POST", "/oauth/keys/trusted", fedTenantB, `{"keyId":"k1","jwk":`+jwk+`}`); r.status != 409 || fedErrCode(r) != "KEY_OWNED_BY_DIFFERENT_TENANT" {
		t.Fatalf("B registers A's keyId: %d %s", r.status, r.raw)
	}
	bad := map[string][3]string{
		"bad keyId path":    {"POST", "/oauth/keys/trusted/k%20x/invalidate", ""},
		"EC key":            {"POST", "/oauth/keys/trusted", `{"keyId":"e1","jwk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}`},
		"malformed body":    {"POST", "/oauth/keys/trusted", `{"keyId":`},
		"negative grace":    {"POST", "/oauth/keys/trusted/k1/invalidate", `{"gracePeriodSec":-1}`},
		"reactivate empty":  {"POST", "/oauth/keys/trusted/k1/reactivate", ""},
		"reactivate past":   {"POST", "/oauth/keys/trusted/k1/reactivate", `{"validTo":"2001-01-01T00:00:00Z"}`},
		"kid/keyId swapped": {"POST", "/oauth/keys/trusted", `{"keyId":"k2","jwk":` + jwk + `}`},
	}
	for name, op := range bad {
		if r := f.call(t, op[0], op[1], fedTenantA, op[2]); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	if r := f.call(t, "POST", "/oauth/keys/trusted/k1/invalidate", fedTenantA, ""); r.status != 200 || r.raw != "" {
		t.Fatalf("invalidate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/keys/trusted/k1/reactivate", fedTenantA, `{"validTo":"2099-01-01T00:00:00Z"}`); r.status != 200 || r.body["active"] != true {
		t.Fatalf("reactivate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "DELETE", "/oauth/keys/trusted/k1", fedTenantA, ""); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "DELETE", "/oauth/keys/trusted/k1", fedTenantA, ""); r.status != 404 {
		t.Fatalf("delete again: %d %s", r.status, r.raw)
	}
}

func TestOIDCProvidersOverHTTP(t *testing.T) {
	t.Parallel()
	f := startFederation(t, false)
	reg := `{"wellKnownConfigUri":"` + f.idp.WellKnown() + `","expectedAudiences":["app-a"],"rolesClaim":"realm_access.roles"}`
	r := f.call(t, "POST", "/oauth/oidc/providers", fedTenantA, reg)
	if r.status != 200 || r.body["active"] != true || r.body["rolesClaim"] != "realm_access.roles" {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	id, _ := r.body["id"].(string)
	if r := f.call(t, "POST", "/oauth/oidc/providers", fedTenantA, reg); r.status != 409 || fedErrCode(r) != "OIDC_PROVIDER_DUPLICATE" {
		t.Fatalf("duplicate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers", "default-tenant", reg); r.status != 400 || fedErrCode(r) != "OIDC_INVALID_TENANT" {
		t.Fatalf("non-UUID tenant: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers", fedTenantA, `{"wellKnownConfigUri":"http://idp.example/x"}`); r.status != 400 {
		t.Fatalf("http URI: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", fedTenantA, ""); r.status != 200 || len(r.list) != 1 {
		t.Fatalf("list: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers?activeOnly=maybe", fedTenantA, ""); r.status != 400 {
		t.Fatalf("bad activeOnly: %d", r.status)
	}
	// Tenant isolation.
	if r := f.call(t, "GET", "/oauth/oidc/providers", fedTenantB, ""); r.raw != "[]" {
		t.Fatalf("B lists: %s", r.raw)
	}
	for _, op := range [][3]string{{"PATCH", "/oauth/oidc/providers/" + id, `{}`}, {"POST", "/oauth/oidc/providers/" + id + "/invalidate", ""},
		{"POST", "/oauth/oidc/providers/" + id + "/reactivate", ""}, {"DELETE", "/oauth/oidc/providers/" + id, ""}} {
		if r := f.call(t, op[0], op[1], fedTenantB, op[2]); r.status != 404 || fedErrCode(r) != "OIDC_PROVIDER_NOT_FOUND" {
			t.Errorf("B %v: %d %s", op, r.status, r.raw)
		}
	}
	// Another tenant may register the same identity provider, even with
	// the same audiences (docs/decisions/0008-oidc-providers.md): 200, and
	// each tenant lists only its own registration.
	if r := f.call(t, "POST", "/oauth/oidc/providers", fedTenantB, reg); r.status != 200 || r.body["id"] == id {
		t.Fatalf("another tenant's registration of the same URI: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", fedTenantB, ""); r.status != 200 || len(r.list) != 1 {
		t.Fatalf("B's list: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "PATCH", "/oauth/oidc/providers/not-a-uuid", fedTenantA, `{}`); r.status != 400 {
		t.Fatalf("bad id: %d", r.status)
	}
	// docs/decisions/0008-oidc-providers.md: any authenticated member lists; every
	// write and the reload need ROLE_ADMIN.
	if r := f.call(t, "GET", "/oauth/oidc/providers", fedTenantA, "", "X-Test-Roles", "ROLE_M2M"); r.status != 200 || len(r.list) != 1 {
		t.Fatalf("non-admin list: %d %s", r.status, r.raw)
	}
	for _, op := range [][3]string{{"POST", "/oauth/oidc/providers", reg}, {"PATCH", "/oauth/oidc/providers/" + id, `{}`},
		{"POST", "/oauth/oidc/providers/" + id + "/invalidate", ""}, {"POST", "/oauth/oidc/providers/" + id + "/reactivate", ""},
		{"DELETE", "/oauth/oidc/providers/" + id, ""}, {"POST", "/oauth/oidc/providers/reload", ""}} {
		if r := f.call(t, op[0], op[1], fedTenantA, op[2], "X-Test-Roles", "ROLE_M2M"); r.status != 403 || fedErrCode(r) != "FORBIDDEN" {
			t.Errorf("non-admin %v: %d %s", op[:2], r.status, r.raw)
		}
	}
	if r := f.call(t, "PATCH", "/oauth/oidc/providers/"+id, fedTenantA, `{"rolesClaim":null}`); r.status != 200 || r.body["rolesClaim"] != nil {
		t.Fatalf("patch: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers/"+id+"/invalidate", fedTenantA, ""); r.status != 200 || r.raw != "" {
		t.Fatalf("invalidate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "PATCH", "/oauth/oidc/providers/"+id, fedTenantA, `{}`); r.status != 409 || fedErrCode(r) != "OIDC_PROVIDER_INACTIVE" {
		t.Fatalf("patch inactive: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers/"+id+"/reactivate", fedTenantA, `{"reactivateKeys":false}`); r.status != 200 || r.body["active"] != true {
		t.Fatalf("reactivate: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "POST", "/oauth/oidc/providers/reload", fedTenantA, ""); r.status != 200 {
		t.Fatalf("reload: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "DELETE", "/oauth/oidc/providers/"+id, fedTenantA, ""); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	if r := f.call(t, "GET", "/oauth/oidc/providers", fedTenantA, ""); r.raw != "[]" {
		t.Fatalf("after delete: %s", r.raw)
	}
}
