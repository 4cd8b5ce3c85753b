package fast

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/authcache"
	"svc/compute"
	"svc/compute/member"
	"svc/iam"
	"svc/platform/config"
)

const formCT = "application/x-www-form-urlencoded"

// post sends a form to path with extra headers.
func (h *jwtHarness) post(path string, form url.Values, hdr ...string) reply {
	h.t.Helper()
	return h.do("POST", path, "", strings.NewReader(form.Encode()), append([]string{"Content-Type", formCT}, hdr...)...)
}

// revokedToken is a client_credentials token of the bootstrap client,
// revoked through the revocation endpoint.
func (h *jwtHarness) revokedToken() string {
	h.t.Helper()
	tok := h.clientToken(bootID, bootSecret)
	if r := h.post("/oauth/revoke", url.Values{"token": {tok}}, "Authorization", basic(bootID, bootSecret)); r.status != 200 {
		h.t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	return tok
}

// TestBearerChallenges: RFC 6750 3 and 3.1. The RFC's own examples: a
// request without a token gets just `Bearer realm=…`; an invalid token
// gets error="invalid_token"; a token lacking the role gets 403
// error="insufficient_scope".
func TestBearerChallenges(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	r := h.do("GET", "/model/", "", nil)
	if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="svc"` ||
		r.json(t)["detail"] != "UNAUTHORIZED: missing token" {
		t.Fatalf("no token: %d %v %s", r.status, r.header, r.body)
	}
	expired := h.adminClaims(tenantA)
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	r = h.do("GET", "/model/", h.mint(expired), nil)
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) ||
		r.json(t)["detail"] != "UNAUTHORIZED: invalid or expired token" {
		t.Fatalf("expired token: %d %v %s", r.status, r.header, r.body)
	}
	user := h.adminClaims(tenantA)
	user["user_roles"] = []string{"ROLE_USER"}
	r = h.do("GET", "/clients", h.mint(user), nil)
	if r.status != 403 || r.header.Get("WWW-Authenticate") != `Bearer realm="svc", error="insufficient_scope", error_description="the token lacks the required role"` {
		t.Fatalf("no admin role: %d %v %s", r.status, r.header, r.body)
	}
	if r := h.do("GET", "/account", h.mint(h.adminClaims(tenantA)), nil); r.status != 200 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("valid token: %d %v", r.status, r.header)
	}
}

// A Spring Security client (client_secret_basic): Basic credentials with
// url-encoded halves, a form body with grant_type and scope, Accept JSON.
func TestSpringStyleTokenRequest(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	r := h.do("POST", "/oauth/token", "", strings.NewReader("grant_type=client_credentials&scope=read+write"),
		"Authorization", basic(bootID, bootSecret), "Content-Type", formCT+";charset=UTF-8",
		"Accept", "application/json;charset=UTF-8")
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	m := r.json(t)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["expires_in"] != float64(h.cfg.JWTExpirySeconds) {
		t.Fatalf("response %v", m)
	}
	if r := h.do("GET", "/account", m["access_token"].(string), nil); r.status != 200 {
		t.Fatalf("token does not authenticate: %d %s", r.status, r.body)
	}
}

// An Authlib (Python) client with token_endpoint_auth_method
// client_secret_post: credentials in the form body, no Authorization.
func TestAuthlibStyleTokenRequest(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	r := h.post("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {bootID},
		"client_secret": {bootSecret}}, "Accept", "application/json", "User-Agent", "Authlib/1.3.0 (+https://authlib.org/)")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := h.do("GET", "/account", r.json(t)["access_token"].(string), nil); r.status != 200 {
		t.Fatalf("token does not authenticate: %d %s", r.status, r.body)
	}
	// Multipart bodies carry the credentials too.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	for _, kv := range [][2]string{{"grant_type", "client_credentials"}, {"client_id", bootID}, {"client_secret", bootSecret}} {
		w.WriteField(kv[0], kv[1])
	}
	w.Close()
	if r := h.do("POST", "/oauth/token", "", &mp, "Content-Type", w.FormDataContentType()); r.status != 200 {
		t.Fatalf("multipart client_secret_post: %d %s", r.status, r.body)
	}
	// Basic plus the same client_id in the body (some libraries always
	// send it) is one method.
	if r := h.post("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {bootID}},
		"Authorization", basic(bootID, bootSecret)); r.status != 200 {
		t.Fatalf("Basic with client_id echoed in the body: %d %s", r.status, r.body)
	}
}

// Client authentication errors say what is wrong with the request, never
// whether the client id exists.
func TestClientAuthenticationErrors(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	cc := url.Values{"grant_type": {"client_credentials"}}
	with := func(kv ...string) url.Values {
		v := url.Values{"grant_type": {"client_credentials"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	cases := []struct {
		name   string
		path   string
		form   url.Values
		hdr    []string
		status int
		code   string
		desc   string
	}{
		{"both methods", "/oauth/token", with("client_id", bootID, "client_secret", bootSecret),
			[]string{"Authorization", basic(bootID, bootSecret)}, 400, "invalid_request", "more than one client authentication method"},
		{"basic and another id", "/oauth/token", with("client_id", "other"),
			[]string{"Authorization", basic(bootID, bootSecret)}, 400, "invalid_request", "more than one client authentication method"},
		{"nothing", "/oauth/token", cc, nil, 401, "invalid_client", "client authentication required"},
		{"id without secret", "/oauth/token", with("client_id", bootID), nil, 401, "invalid_client", "client_secret is required"},
		{"secret without id", "/oauth/token", with("client_secret", bootSecret), nil, 401, "invalid_client", "client_id is required"},
		{"bearer scheme", "/oauth/token", cc, []string{"Authorization", "Bearer x.y.z"}, 401, "invalid_client", "unsupported Authorization scheme"},
		{"malformed basic", "/oauth/token", cc, []string{"Authorization", "Basic !!!"}, 401, "invalid_client", "malformed HTTP Basic credentials"},
		{"secret in the URL", "/oauth/token?client_secret=" + bootSecret, with("client_id", bootID), nil, 400, "invalid_request", "never in the URL"},
		{"unsupported grant", "/oauth/token", with("grant_type", "password"), []string{"Authorization", basic(bootID, bootSecret)},
			400, "unsupported_grant_type", "supported: client_credentials, urn:ietf:params:oauth:grant-type:token-exchange"},
		{"missing grant", "/oauth/token", url.Values{}, []string{"Authorization", basic(bootID, bootSecret)}, 400, "invalid_request", "grant_type is required"},
		{"introspect without token", "/oauth/introspect", url.Values{}, []string{"Authorization", basic(bootID, bootSecret)}, 400, "invalid_request", "token is required"},
		{"revoke without token", "/oauth/revoke", url.Values{}, []string{"Authorization", basic(bootID, bootSecret)}, 400, "invalid_request", "token is required"},
		{"introspect unauthenticated", "/oauth/introspect", url.Values{"token": {"x"}}, nil, 401, "invalid_client", "client authentication required"},
		{"revoke unauthenticated", "/oauth/revoke", url.Values{"token": {"x"}}, nil, 401, "invalid_client", "client authentication required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.post(c.path, c.form, c.hdr...)
			if r.status != c.status || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
			m := r.json(t)
			if m["error"] != c.code || !strings.Contains(m["error_description"].(string), c.desc) {
				t.Fatalf("body %s, want %s containing %q", r.body, c.code, c.desc)
			}
			if c.status == 401 && r.header.Get("WWW-Authenticate") != `Basic realm="svc"` {
				t.Fatalf("401 without the Basic challenge: %v", r.header)
			}
		})
	}
	// Unknown id and wrong secret, by either method, read the same.
	var bodies []string
	for _, r := range []reply{
		h.post("/oauth/token", cc, "Authorization", basic(bootID, "wrong")),
		h.post("/oauth/token", cc, "Authorization", basic("no-such-client", "wrong")),
		h.post("/oauth/token", with("client_id", bootID, "client_secret", "wrong")),
		h.post("/oauth/token", with("client_id", "no-such-client", "client_secret", "wrong")),
	} {
		if r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		bodies = append(bodies, string(r.body))
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Fatalf("bodies differ: %q vs %q", b, bodies[0])
		}
	}
	if !strings.Contains(bodies[0], `"error_description":"client authentication failed"`) {
		t.Fatalf("body %s", bodies[0])
	}
}

// TestAuthorizationServerMetadata: RFC 8414 3.2's members, the same
// document at the OpenID location, under the context path like JWKS.
func TestAuthorizationServerMetadata(t *testing.T) {
	t.Parallel()
	for _, cp := range []string{"/api", ""} {
		h := newJWTHarness(t, func(c *config.Config) { c.ContextPath = cp; c.JWTIssuer = "https://auth.example.com" })
		r := h.do("GET", "/.well-known/oauth-authorization-server", "", nil)
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("cp %q: %d %s", cp, r.status, r.body)
		}
		m := r.json(t)
		base := h.base
		want := map[string]any{
			"issuer":                 "https://auth.example.com",
			"token_endpoint":         base + "/oauth/token",
			"jwks_uri":               base + "/.well-known/jwks.json",
			"introspection_endpoint": base + "/oauth/introspect",
			"revocation_endpoint":    base + "/oauth/revoke",
		}
		for k, v := range want {
			if m[k] != v {
				t.Fatalf("cp %q: %s = %v, want %v", cp, k, m[k], v)
			}
		}
		for _, k := range []string{"token_endpoint_auth_methods_supported", "introspection_endpoint_auth_methods_supported",
			"revocation_endpoint_auth_methods_supported"} {
			if l, _ := m[k].([]any); len(l) != 2 || l[0] != "client_secret_basic" || l[1] != "client_secret_post" {
				t.Fatalf("%s = %v", k, m[k])
			}
		}
		if l, _ := m["grant_types_supported"].([]any); len(l) != 2 || l[0] != "client_credentials" || l[1] != iam.GrantTokenExchange {
			t.Fatalf("grant_types_supported = %v", m["grant_types_supported"])
		}
		if l, ok := m["response_types_supported"].([]any); !ok || len(l) != 0 {
			t.Fatalf("response_types_supported = %v", m["response_types_supported"])
		}
		oidc := h.do("GET", "/.well-known/openid-configuration", "", nil)
		if oidc.status != 200 || string(oidc.body) != string(r.body) {
			t.Fatalf("openid-configuration differs: %d %s", oidc.status, oidc.body)
		}
		// RFC 8414 3.1's locations at the origin too (issue 26): the bare
		// root and the root followed by the context path.
		origin := strings.TrimSuffix(h.base, cp)
		for _, u := range []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/oauth-authorization-server" + cp,
			origin + "/.well-known/openid-configuration"} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != string(r.body) {
				t.Fatalf("cp %q: %s: %d %s", cp, u, resp.StatusCode, b)
			}
		}
		// Every advertised endpoint is where the document says.
		if r := h.do("GET", "/.well-known/jwks.json", "", nil); r.status != 200 {
			t.Fatalf("jwks_uri: %d", r.status)
		}
		for _, p := range []string{"/oauth/token", "/oauth/introspect", "/oauth/revoke"} {
			if r := h.do("GET", p, "", nil); r.status != 405 || r.header.Get("Allow") != "POST" || r.json(t)["error"] != "method_not_allowed" {
				t.Fatalf("GET %s: %d %v %s", p, r.status, r.header, r.body)
			}
		}
	}
}

// TestIntrospection follows RFC 7662 2.1 and 2.2: the example request's
// shape (token plus token_type_hint, client authenticated), an active
// response with the standard members, and {"active":false} for anything
// else, including another tenant's token.
func TestIntrospection(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	tok := h.clientToken(bootID, bootSecret)
	r := h.post("/oauth/introspect", url.Values{"token": {tok}, "token_type_hint": {"access_token"}},
		"Authorization", basic(bootID, bootSecret), "Accept", "application/json")
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	m := r.json(t)
	_, claims := claimsOf(t, tok)
	if m["active"] != true || m["client_id"] != bootID || m["sub"] != bootID || m["token_type"] != "Bearer" ||
		m["iss"] != h.cfg.JWTIssuer || m["jti"] != claims["jti"] || m["exp"] != claims["exp"] || m["iat"] != claims["iat"] ||
		m["tenant"] != tenantA || m["scope"] != strings.Join(h.cfg.BootstrapRoles, " ") || m["username"] == nil {
		t.Fatalf("active response %v\nclaims %v", m, claims)
	}
	// client_secret_post authenticates the introspection request too.
	if r := h.post("/oauth/introspect", url.Values{"token": {tok}, "client_id": {bootID}, "client_secret": {bootSecret}}); r.json(t)["active"] != true {
		t.Fatalf("client_secret_post: %d %s", r.status, r.body)
	}
	other := h.mint(h.adminClaims(tenantB))
	for name, token := range map[string]string{"garbage": "2YotnFZFEjr1zCsicMWpAA", "other tenant": other,
		"expired": h.mint(func() jwt.MapClaims {
			c := h.adminClaims(tenantA)
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return c
		}())} {
		r := h.post("/oauth/introspect", url.Values{"token": {token}}, "Authorization", basic(bootID, bootSecret))
		if r.status != 200 || string(r.body) != `{"active":false}` {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
	}
}

// TestRevocation follows RFC 7009: the example request (an unknown token
// with a hint) is 200; a revoked token is refused by the HTTP API,
// introspection, token exchange and gRPC compute members, and a second
// revocation is 200 again; a token of another client cannot be revoked.
func TestRevocation(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t)
	auth := []string{"Authorization", basic(bootID, bootSecret)}
	// RFC 7009 2.1's example body; the token is not one svc knows.
	if r := h.post("/oauth/revoke", url.Values{"token": {"45ghiukldjahdnhzdauz"}, "token_type_hint": {"refresh_token"}}, auth...); r.status != 200 {
		t.Fatalf("unknown token: %d %s", r.status, r.body)
	}

	// A second client with ROLE_M2M (to join as a compute member).
	admin := h.mint(h.adminClaims(tenantA))
	cr := h.do("POST", "/clients", admin, nil)
	if cr.status != 200 {
		t.Fatalf("create client: %d %s", cr.status, cr.body)
	}
	id, secret := cr.json(t)["client_id"].(string), cr.json(t)["client_secret"].(string)
	tok := h.clientToken(id, secret)
	keep := h.clientToken(id, secret)
	for _, tk := range []string{tok, keep} {
		if r := h.do("GET", "/account", tk, nil); r.status != 200 {
			t.Fatalf("before revocation: %d", r.status)
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	grpcSrv := compute.New(compute.Config{}, &authcache.TokenVerifier{C: h.cache, Log: log}, log)
	grpcSrv.Start(lis, nil)
	t.Cleanup(grpcSrv.Stop)
	join := func(token string) error {
		m, err := member.Connect(context.Background(), member.Config{Endpoint: lis.Addr().String(), Token: token,
			Tags: []string{"calc"}, JoinTimeout: 5 * time.Second, Log: log}, member.Handlers{})
		if err == nil {
			m.Close()
		}
		return err
	}
	if err := join(tok); err != nil {
		t.Fatalf("member joins before revocation: %v", err)
	}

	// Another client may not revoke it.
	if r := h.post("/oauth/revoke", url.Values{"token": {tok}}, auth...); r.status != 400 || r.json(t)["error"] != "unauthorized_client" {
		t.Fatalf("foreign client: %d %s", r.status, r.body)
	}
	// Its own client revokes it, here by client_secret_post.
	r := h.post("/oauth/revoke", url.Values{"token": {tok}, "token_type_hint": {"access_token"}, "client_id": {id}, "client_secret": {secret}})
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}

	// HTTP: the uniform invalid-token 401.
	if r := h.do("GET", "/account", tok, nil); r.status != 401 || r.json(t)["detail"] != "UNAUTHORIZED: invalid or expired token" ||
		!strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("HTTP after revocation: %d %v %s", r.status, r.header, r.body)
	}
	// Introspection: inactive.
	if r := h.post("/oauth/introspect", url.Values{"token": {tok}}, "Authorization", basic(id, secret)); string(r.body) != `{"active":false}` {
		t.Fatalf("introspection after revocation: %s", r.body)
	}
	// Token exchange: not a valid subject.
	if r := h.token(id, secret, url.Values{"grant_type": {iam.GrantTokenExchange}, "subject_token": {tok},
		"subject_token_type": {iam.TokenTypeJWT}}); r.status != 400 || r.json(t)["error"] != "invalid_grant" {
		t.Fatalf("exchange with a revoked subject: %d %s", r.status, r.body)
	}
	// gRPC: Unauthenticated.
	if err := join(tok); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("gRPC member with a revoked token: %v", err)
	}
	// Revoking again is 200; the client's other token is untouched.
	if r := h.post("/oauth/revoke", url.Values{"token": {tok}}, "Authorization", basic(id, secret)); r.status != 200 {
		t.Fatalf("second revocation: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/account", keep, nil); r.status != 200 {
		t.Fatalf("other token after revocation: %d", r.status)
	}
	if err := join(keep); err != nil {
		t.Fatalf("member with the other token: %v", err)
	}
	// The revocation is in storage, until the token's expiry.
	l, err := h.stores.Revocations.ListRevokedTokens(context.Background(), time.Now())
	_, claims := claimsOf(t, tok)
	if err != nil || len(l) != 1 || l[0].JTI != claims["jti"] || l[0].ClientID != id || l[0].Tenant != tenantA ||
		l[0].Until.Unix() != int64(claims["exp"].(float64))+30 {
		t.Fatalf("stored revocations %+v %v", l, err)
	}
	// A token svc did not issue to a client (an operator-minted admin
	// token) has no client to revoke it.
	if r := h.post("/oauth/revoke", url.Values{"token": {admin}}, auth...); r.status != 400 || r.json(t)["error"] != "unauthorized_client" {
		t.Fatalf("admin token: %d %s", r.status, r.body)
	}
}

// clientFrom is an HTTP client whose connections leave from local (a
// loopback address other than 127.0.0.1 is another source address).
func clientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

func postFrom(t *testing.T, c *http.Client, url_ string, form url.Values, hdr ...string) reply {
	t.Helper()
	req, _ := http.NewRequest("POST", url_, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", formCT)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

// TestClientAuthThrottle: failed client authentications are limited per
// client id and per address (429 with Retry-After), while the valid
// client, from its own address, keeps getting tokens.
func TestClientAuthThrottle(t *testing.T) {
	t.Parallel()
	h := newJWTHarness(t, func(c *config.Config) {
		c.OAuthMaxFailuresPerClient, c.OAuthMaxFailuresPerAddress, c.OAuthFailureWindow = 3, 5, time.Hour
	})
	valid, guesser, sprayer := clientFrom("127.0.0.1"), clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	if r := postFrom(t, guesser, h.base+"/oauth/token", url.Values{}); r.status == 0 {
		t.Skip("no 127.0.0.2 on this host")
	}
	cc := url.Values{"grant_type": {"client_credentials"}}
	tokenURL := h.base + "/oauth/token"
	if r := postFrom(t, valid, tokenURL, cc, "Authorization", basic(bootID, bootSecret)); r.status != 200 {
		t.Fatalf("valid client: %d %s", r.status, r.body)
	}
	// The guesser fails on bootclient's secret until the per-client limit.
	// (The probe above already counted one failure for its address.)
	for i := 0; i < 3; i++ {
		if r := postFrom(t, guesser, tokenURL, cc, "Authorization", basic(bootID, "guess")); r.status != 401 {
			t.Fatalf("guess %d: %d %s", i, r.status, r.body)
		}
	}
	r := postFrom(t, guesser, tokenURL, cc, "Authorization", basic(bootID, "guess"))
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.json(t)["error"] != "temporarily_unavailable" {
		t.Fatalf("throttled guess: %d %v %s", r.status, r.header, r.body)
	}
	// Even the right secret is refused to the guesser now: a 429 must not
	// tell a right guess from a wrong one.
	if r := postFrom(t, guesser, tokenURL, cc, "Authorization", basic(bootID, bootSecret)); r.status != 429 {
		t.Fatalf("right secret from the guesser: %d", r.status)
	}
	// Any other address is refused for that client id, by either method...
	if r := postFrom(t, sprayer, tokenURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {bootID},
		"client_secret": {"guess"}}); r.status != 429 {
		t.Fatalf("per-client limit from another address: %d", r.status)
	}
	// ...but the valid client keeps its full rate, at every endpoint.
	for i := 0; i < 20; i++ {
		if r := postFrom(t, valid, tokenURL, cc, "Authorization", basic(bootID, bootSecret)); r.status != 200 {
			t.Fatalf("valid client request %d: %d %s", i, r.status, r.body)
		}
	}
	// Per address: spraying unknown client ids is cut off after 5.
	for i := 0; i < 5; i++ {
		postFrom(t, sprayer, tokenURL, cc, "Authorization", basic("id"+string(rune('a'+i)), "x"))
	}
	if r := postFrom(t, sprayer, h.base+"/oauth/introspect", url.Values{"token": {"x"}}, "Authorization", basic("fresh", "x")); r.status != 429 {
		t.Fatalf("per-address limit: %d %s", r.status, r.body)
	}
}

// Tokens of the companions answer server_error in mock mode, like the
// token endpoint.
func TestOAuthCompanionsInMockMode(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, p := range []string{"/api/oauth/introspect", "/api/oauth/revoke"} {
		if r := do(s, "POST", p); r.StatusCode() != 500 || !strings.Contains(string(r.Body()), `"error":"server_error"`) {
			t.Fatalf("%s: %d %s", p, r.StatusCode(), r.Body())
		}
	}
	if r := do(s, "GET", "/api/.well-known/oauth-authorization-server"); r.StatusCode() != 200 {
		t.Fatalf("metadata in mock mode: %d", r.StatusCode())
	}
}
