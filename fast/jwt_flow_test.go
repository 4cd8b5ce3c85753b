package fast

import (
	"bytes"
	"encoding/base64"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"svc/iam"
	"svc/platform/config"
)

func TestJWTWholeFlow(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)

	// No token: the uniform 401.
	if r := h.do("GET", "/model/", "", nil); r.status != 401 || !strings.Contains(string(r.body), "UNAUTHORIZED: missing token") {
		t.Fatalf("no token: %d %s", r.status, r.body)
	}

	// Bootstrap client → admin token with exactly the claims of docs/decisions/0006-tokens-keypairs-clients.md.
	r := h.token(bootID, bootSecret, url.Values{"grant_type": {"client_credentials"}})
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
		t.Fatalf("bootstrap token: %d %v %s", r.status, r.header, r.body)
	}
	body := r.json(t)
	if body["token_type"] != "Bearer" || body["expires_in"] != float64(3600) || body["issued_token_type"] != nil {
		t.Fatalf("token response: %v", body)
	}
	admin := body["access_token"].(string)
	hdr, cl := claimsOf(t, admin)
	if hdr["alg"] != "RS256" || hdr["kid"] != h.kid || hdr["typ"] != "JWT" {
		t.Fatalf("header: %v", hdr)
	}
	want := []string{"sub", "iss", "exp", "iat", "jti", "caas_org_id", "caas_user_id", "user_roles", "scopes", "caas_tier"}
	if len(cl) != len(want) {
		t.Fatalf("claims %v, want exactly %v", cl, want)
	}
	for _, k := range want {
		if _, ok := cl[k]; !ok {
			t.Fatalf("claim %s missing: %v", k, cl)
		}
	}
	if cl["sub"] != bootID || cl["iss"] != "svc" || cl["caas_org_id"] != tenantA || cl["caas_user_id"] != "admin" ||
		cl["caas_tier"] != "unlimited" || cl["exp"].(float64)-cl["iat"].(float64) != 3600 {
		t.Fatalf("claims: %v", cl)
	}
	if roles := cl["user_roles"].([]any); len(roles) != 2 || roles[0] != iam.RoleAdmin || cl["scopes"].([]any)[1] != iam.RoleM2M {
		t.Fatalf("roles: %v / %v", cl["user_roles"], cl["scopes"])
	}

	// Create a machine client: RFC 7591 result, secret shown once.
	r = h.do("POST", "/clients", admin, nil)
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create client: %d %s", r.status, r.body)
	}
	created := r.json(t)
	id, secret := created["client_id"].(string), created["client_secret"].(string)
	issued := int64(created["client_id_issued_at"].(float64))
	if len(id) != 16 || len(secret) != 64 || created["client_secret_expires_at"] != float64(0) || time.Since(time.Unix(issued, 0)) > time.Minute {
		t.Fatalf("create result: %v", created)
	}
	if r = h.do("GET", "/clients", admin, nil); r.status != 200 || !strings.Contains(string(r.body), `"clientId":"`+id+`"`) || strings.Contains(string(r.body), secret) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}

	// The client's token authenticates a call; it is not an administrator.
	m2m := h.clientToken(id, secret)
	_, mc := claimsOf(t, m2m)
	if mc["sub"] != id || mc["caas_user_id"] != id || mc["caas_org_id"] != tenantA {
		t.Fatalf("m2m claims: %v", mc)
	}
	if r = h.do("GET", "/model/", m2m, nil); r.status == 401 || r.status == 403 {
		t.Fatalf("authenticated call refused: %d %s", r.status, r.body)
	}
	if r = h.do("GET", "/clients", m2m, nil); r.status != 403 || !strings.Contains(string(r.body), `"errorCode":"FORBIDDEN"`) {
		t.Fatalf("non-admin on /clients: %d %s", r.status, r.body)
	}

	// Rotate: the old secret is refused, the new one works.
	r = h.do("PUT", "/clients/"+id+"/secret", admin, nil)
	if r.status != 200 {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	secret2 := r.json(t)["client_secret"].(string)
	if secret2 == secret {
		t.Fatal("rotation kept the secret")
	}
	if r = h.token(id, secret, url.Values{"grant_type": {"client_credentials"}}); r.status != 401 ||
		r.json(t)["error"] != "invalid_client" || r.header.Get("WWW-Authenticate") != `Basic realm="svc"` {
		t.Fatalf("old secret: %d %v %s", r.status, r.header, r.body)
	}
	h.clientToken(id, secret2)

	// Token exchange: the client acts on behalf of the administrator.
	r = h.token(id, secret2, url.Values{"grant_type": {iam.GrantTokenExchange}, "subject_token": {admin},
		"subject_token_type": {iam.TokenTypeJWT}})
	if r.status != 200 {
		t.Fatalf("exchange: %d %s", r.status, r.body)
	}
	ex := r.json(t)
	if ex["issued_token_type"] != iam.TokenTypeJWT {
		t.Fatalf("exchange response: %v", ex)
	}
	_, oc := claimsOf(t, ex["access_token"].(string))
	act, _ := oc["act"].(map[string]any)
	if oc["sub"] != bootID || oc["caas_user_id"] != bootID || act["sub"] != id || oc["caas_org_id"] != tenantA ||
		oc["scopes"] != nil || len(oc["user_roles"].([]any)) != 2 {
		t.Fatalf("on-behalf-of claims: %v", oc)
	}
	// The OBO token is a user token carrying the administrator's roles.
	if r = h.do("GET", "/clients", ex["access_token"].(string), nil); r.status != 200 {
		t.Fatalf("OBO token on /clients: %d %s", r.status, r.body)
	}

	// A subject of another tenant is refused with access_denied.
	other := h.mint(h.adminClaims(tenantB))
	r = h.token(id, secret2, url.Values{"grant_type": {iam.GrantTokenExchange}, "subject_token": {other},
		"subject_token_type": {iam.TokenTypeJWT}})
	if r.status != 403 || r.json(t)["error"] != "access_denied" {
		t.Fatalf("cross-tenant exchange: %d %s", r.status, r.body)
	}

	// Delete: its credentials stop issuing tokens.
	if r = h.do("DELETE", "/clients/"+id, admin, nil); r.status != 200 || r.json(t)["clientId"] != id {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r = h.token(id, secret2, url.Values{"grant_type": {"client_credentials"}}); r.status != 401 {
		t.Fatalf("deleted client: %d %s", r.status, r.body)
	}

	// JWKS publishes the bootstrap key without authentication.
	if r = h.do("GET", "/.well-known/jwks.json", "", nil); r.status != 200 || !strings.Contains(string(r.body), `"kid":"`+h.kid+`"`) {
		t.Fatalf("jwks: %d %s", r.status, r.body)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	form := func(v ...string) string {
		u := url.Values{}
		for i := 0; i+1 < len(v); i += 2 {
			u.Set(v[i], v[i+1])
		}
		return u.Encode()
	}
	ct := "application/x-www-form-urlencoded"
	subject := h.mint(h.adminClaims(tenantA))
	expired := h.adminClaims(tenantA)
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	cases := []struct {
		name, auth, body string
		status           int
		code             string
	}{
		{"no auth", "", form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"bad base64", "Basic !!!", form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"unpadded base64", "Basic " + strings.TrimRight(b64("bootclien%74:"+bootSecret), "="), form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"no colon", "Basic " + b64("bootclient"), form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"bad escape", "Basic " + b64("boot%zz:x"), form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"wrong secret", basic(bootID, "nope"), form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"unknown client", basic("ZZZZ", bootSecret), form("grant_type", "client_credentials"), 401, "invalid_client"},
		{"bad credentials beat a bad grant", basic(bootID, "nope"), form("grant_type", "password"), 401, "invalid_client"},
		{"lower-case scheme", "basic " + basic(bootID, bootSecret)[6:], form("grant_type", "nope"), 400, "unsupported_grant_type"},
		{"missing grant", basic(bootID, bootSecret), "", 400, "invalid_request"},
		{"unknown grant", basic(bootID, bootSecret), form("grant_type", "password"), 400, "unsupported_grant_type"},
		{"exchange without subject", basic(bootID, bootSecret), form("grant_type", iam.GrantTokenExchange, "subject_token_type", iam.TokenTypeJWT), 400, "invalid_request"},
		{"exchange wrong type", basic(bootID, bootSecret), form("grant_type", iam.GrantTokenExchange, "subject_token", subject,
			"subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), 400, "invalid_grant"},
		{"exchange garbage subject", basic(bootID, bootSecret), form("grant_type", iam.GrantTokenExchange, "subject_token", "a.b.c",
			"subject_token_type", iam.TokenTypeJWT), 400, "invalid_grant"},
		{"exchange expired subject", basic(bootID, bootSecret), form("grant_type", iam.GrantTokenExchange, "subject_token", h.mint(expired),
			"subject_token_type", iam.TokenTypeJWT), 400, "invalid_grant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := []string{"Content-Type", ct}
			if c.auth != "" {
				hdr = append(hdr, "Authorization", c.auth)
			}
			r := h.do("POST", "/oauth/token", "", strings.NewReader(c.body), hdr...)
			if r.status != c.status || r.header.Get("Content-Type") != "application/json" || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
			m := r.json(t)
			if m["error"] != c.code || m["error_description"] == "" || len(m) != 2 {
				t.Fatalf("body %s, want error %s", r.body, c.code)
			}
		})
	}
	// Multipart bodies and the query string are read too; the body wins.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	w.WriteField("grant_type", "client_credentials")
	w.Close()
	if r := h.do("POST", "/oauth/token?grant_type=password", "", &mp, "Content-Type", w.FormDataContentType(),
		"Authorization", basic(bootID, bootSecret)); r.status != 200 {
		t.Fatalf("multipart: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/oauth/token?grant_type=client_credentials", "", nil, "Authorization", basic(bootID, bootSecret)); r.status != 200 {
		t.Fatalf("query-string grant: %d %s", r.status, r.body)
	}
	// Both halves are form-URL-decoded: an escaped id authenticates.
	if r := h.do("POST", "/oauth/token", "", strings.NewReader(form("grant_type", "client_credentials")), "Content-Type", ct,
		"Authorization", "Basic "+b64("bootclien%74:"+bootSecret)); r.status != 200 {
		t.Fatalf("escaped id: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/oauth/token", "", nil); r.status != 405 || r.header.Get("Allow") != "POST" || r.json(t)["error"] != "method_not_allowed" {
		t.Fatalf("GET token endpoint: %d %v %s", r.status, r.header, r.body)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestTokenEndpointInMockMode(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	r := do(s, "POST", "/api/oauth/token")
	if r.StatusCode() != 500 || !strings.Contains(string(r.Body()), `"error":"server_error"`) {
		t.Fatalf("mock-mode token endpoint: %d %s", r.StatusCode(), r.Body())
	}
	if r := do(s, "GET", "/api/clients"); r.StatusCode() != 501 {
		t.Fatalf("mock-mode /clients: %d", r.StatusCode())
	}
}

func TestWithAdminRoleGate(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	admin := h.clientToken(bootID, bootSecret)
	if r := h.do("POST", "/clients?withAdminRole=true", admin, nil); r.status != 404 || !strings.Contains(string(r.body), "FEATURE_DISABLED") {
		t.Fatalf("flag off: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/clients", admin, nil); r.status != 200 || strings.Count(string(r.body), "clientId") != 1 {
		t.Fatalf("a client was created behind a refusal: %s", r.body)
	}
	if r := h.do("POST", "/clients?withAdminRole=maybe", admin, nil); r.status != 400 || !strings.Contains(string(r.body), `"parameter":"withAdminRole"`) {
		t.Fatalf("bad bool: %d %s", r.status, r.body)
	}

	on := newJWTHarness(t, func(c *config.Config) { c.M2MAdminRoleEnabled = true })
	admin = on.clientToken(bootID, bootSecret)
	r := on.do("POST", "/clients?withAdminRole=true", admin, nil)
	if r.status != 200 {
		t.Fatalf("flag on: %d %s", r.status, r.body)
	}
	c := r.json(t)
	tok := on.clientToken(c["client_id"].(string), c["client_secret"].(string))
	if r := on.do("GET", "/clients", tok, nil); r.status != 200 {
		t.Fatalf("admin-role client on /clients: %d %s", r.status, r.body)
	}
}

func TestClientsTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	adminA := h.clientToken(bootID, bootSecret)
	adminB := h.mint(h.adminClaims(tenantB))
	r := h.do("POST", "/clients", adminA, nil)
	if r.status != 200 {
		t.Fatal(r.status, string(r.body))
	}
	c := r.json(t)
	id, secret := c["client_id"].(string), c["client_secret"].(string)

	if r := h.do("GET", "/clients", adminB, nil); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("B lists: %d %s", r.status, r.body)
	}
	for _, op := range []struct{ method, path string }{{"PUT", "/clients/" + id + "/secret"}, {"DELETE", "/clients/" + id}} {
		r := h.do(op.method, op.path, adminB, nil)
		if r.status != 404 || !strings.Contains(string(r.body), `"errorCode":"M2M_CLIENT_NOT_FOUND"`) {
			t.Fatalf("B %s A's client: %d %s", op.method, r.status, r.body)
		}
		// Same answer as for an id that does not exist at all.
		u := h.do(op.method, strings.Replace(op.path, id, "NOSUCHCLIENT0000", 1), adminB, nil)
		if u.status != 404 || strings.Replace(string(u.body), "NOSUCHCLIENT0000", id, 1) != string(r.body) {
			t.Fatalf("existence oracle: %s vs %s", u.body, r.body)
		}
	}
	// A's client is untouched: the original secret still works.
	h.clientToken(id, secret)
	if r := h.do("PUT", "/clients/bad-id!/secret", adminA, nil); r.status != 400 {
		t.Fatalf("bad client id: %d %s", r.status, r.body)
	}
}

func TestKeypairLifecycle(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	admin := h.clientToken(bootID, bootSecret)
	r := h.do("GET", "/oauth/keys/keypair/current", admin, nil)
	if r.status != 200 || r.json(t)["keyId"] != h.kid {
		t.Fatalf("current: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/oauth/keys/keypair", admin, strings.NewReader(`{"algorithm":"HS256","audience":"client"}`)); r.status != 400 || !strings.Contains(string(r.body), "UNSUPPORTED_ALGORITHM") {
		t.Fatalf("HS256 keypair: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/oauth/keys/keypair", admin, strings.NewReader(`{"audience":"robot"}`)); r.status != 400 {
		t.Fatalf("bad audience: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/oauth/keys/keypair", admin, strings.NewReader(`{"audience":"client"}`))
	if r.status != 200 || strings.Contains(string(r.body), "private") {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	newKID := r.json(t)["keyId"].(string)

	// The new key signs at once; the bootstrap key keeps verifying.
	tok := h.clientToken(bootID, bootSecret)
	if hdr, _ := claimsOf(t, tok); hdr["kid"] != newKID {
		t.Fatalf("signer after rotation: %v", hdr["kid"])
	}
	if r := h.do("GET", "/clients", tok, nil); r.status != 200 {
		t.Fatalf("new-key token: %d", r.status)
	}
	if r := h.do("GET", "/clients", admin, nil); r.status != 200 {
		t.Fatalf("old-key token after rotation: %d", r.status)
	}
	r = h.do("GET", "/.well-known/jwks.json", "", nil)
	if !strings.Contains(string(r.body), newKID) || !strings.Contains(string(r.body), h.kid) {
		t.Fatalf("jwks: %s", r.body)
	}

	// Invalidate with grace 0: its tokens stop at once (even cached ones),
	// the bootstrap key signs again.
	if r := h.do("POST", "/oauth/keys/keypair/"+newKID+"/invalidate", admin, strings.NewReader(`{"gracePeriodSec":0}`)); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("invalidate: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/clients", tok, nil); r.status != 401 {
		t.Fatalf("token of an invalidated key: %d", r.status)
	}
	if hdr, _ := claimsOf(t, h.clientToken(bootID, bootSecret)); hdr["kid"] != h.kid {
		t.Fatalf("signer after invalidation: %v", hdr["kid"])
	}
	if r := h.do("POST", "/oauth/keys/keypair/"+newKID+"/invalidate", admin, strings.NewReader(`{"gracePeriodSec":-1}`)); r.status != 400 {
		t.Fatalf("negative grace: %d", r.status)
	}
	if r := h.do("POST", "/oauth/keys/keypair/"+newKID+"/reactivate", admin, strings.NewReader(`{"validTo":"2001-01-01T00:00:00Z"}`)); r.status != 400 {
		t.Fatalf("reactivate into the past: %d %s", r.status, r.body)
	}
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	if r := h.do("POST", "/oauth/keys/keypair/"+newKID+"/reactivate", admin, strings.NewReader(`{"validTo":"`+future+`"}`)); r.status != 200 || r.json(t)["active"] != true {
		t.Fatalf("reactivate: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/clients", tok, nil); r.status != 200 {
		t.Fatalf("token after reactivation: %d", r.status)
	}
	if r := h.do("DELETE", "/oauth/keys/keypair/"+newKID, admin, nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/oauth/keys/keypair/"+newKID, admin, nil); r.status != 404 || !strings.Contains(string(r.body), "KEYPAIR_NOT_FOUND") {
		t.Fatalf("second delete: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/clients", tok, nil); r.status != 401 {
		t.Fatalf("token of a deleted key: %d", r.status)
	}
}

// A harness-signed token verifies with the derived bootstrap kid, and an
// audience, once configured, is required and put on issued tokens.
func TestAudienceRule(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t, func(c *config.Config) { c.JWTAudience = "svc-api" })
	tok := h.clientToken(bootID, bootSecret)
	if _, cl := claimsOf(t, tok); cl["aud"] != "svc-api" {
		t.Fatalf("aud on issued token: %v", cl["aud"])
	}
	if r := h.do("GET", "/clients", tok, nil); r.status != 200 {
		t.Fatalf("own token with audience: %d", r.status)
	}
	c := h.adminClaims(tenantA)
	c["aud"] = []string{"other", "svc-api"}
	if r := h.do("GET", "/clients", h.mint(c), nil); r.status != 200 {
		t.Fatalf("aud array containing ours: %d", r.status)
	}
	delete(c, "aud")
	if r := h.do("GET", "/clients", h.mint(c), nil); r.status != 401 {
		t.Fatalf("missing aud: %d", r.status)
	}
}
