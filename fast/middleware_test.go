package fast

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/apierr"
	"svc/platform/config"
)

type panicAuth struct{}

func (panicAuth) Authenticate(*fasthttp.RequestCtx) (*iam.Principal, error) {
	panic("boom: secret detail")
}

type denyAuth struct{}

func (denyAuth) Authenticate(*fasthttp.RequestCtx) (*iam.Principal, error) {
	return nil, errUnauthenticated
}

type fixedAuth struct{ p *iam.Principal }

func (f fixedAuth) Authenticate(*fasthttp.RequestCtx) (*iam.Principal, error) { return f.p, nil }

var errUnauthenticated = &Problem{Code: apierr.Unauthorized, Message: "x"}

func serverWithAuth(t *testing.T, a Authenticator, mutate ...func(*config.Config)) *Server {
	t.Helper()
	cfg := config.Defaults()
	for _, m := range mutate {
		m(cfg)
	}
	s, err := New(cfg, Deps{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPanicBecomesServerErrorWithTicket(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"sanitized", "verbose"} {
		s := serverWithAuth(t, panicAuth{}, func(c *config.Config) { c.ErrorResponseMode = mode })
		resp := do(s, "GET", "/api/account")
		if resp.StatusCode() != 500 {
			t.Fatalf("%s: status %d", mode, resp.StatusCode())
		}
		m := decode(t, resp.Body())
		ticket, _ := m["ticket"].(string)
		if len(ticket) != 36 {
			t.Fatalf("%s: ticket %q", mode, ticket)
		}
		detail := m["detail"].(string)
		if m["properties"].(map[string]any)["errorCode"] != "SERVER_ERROR" {
			t.Errorf("%s: errorCode", mode)
		}
		if _, ok := m["properties"].(map[string]any)["retryable"]; ok {
			t.Errorf("%s: 5xx carries retryable", mode)
		}
		switch mode {
		case "sanitized":
			if strings.Contains(detail, "boom") || !strings.Contains(detail, ticket) {
				t.Errorf("sanitized detail %q leaks or lacks the ticket", detail)
			}
		case "verbose":
			if !strings.Contains(detail, "boom") {
				t.Errorf("verbose detail %q lacks the cause", detail)
			}
		}
	}
}

func TestAuthorizationSeam(t *testing.T) {
	t.Parallel()
	s := serverWithAuth(t, denyAuth{})
	for _, uri := range []string{"/api/account", "/api/clients"} {
		resp := do(s, "GET", uri)
		if resp.StatusCode() != 401 {
			t.Errorf("%s: %d, want 401", uri, resp.StatusCode())
		}
		if d := decode(t, resp.Body())["detail"]; d != "UNAUTHORIZED: invalid or expired token" {
			t.Errorf("%s: detail %v", uri, d)
		}
	}
	// Discovery and help need no token.
	for _, uri := range []string{"/openapi.json", "/docs", "/api/help", "/api/help/cli", "/api/health"} {
		if resp := do(s, "GET", uri); resp.StatusCode() != 200 {
			t.Errorf("%s: %d, want 200 without a token", uri, resp.StatusCode())
		}
	}
	user := serverWithAuth(t, fixedAuth{&iam.Principal{TenantID: "t", Roles: []string{"ROLE_USER"}}})
	if resp := do(user, "GET", "/api/clients"); resp.StatusCode() != 403 {
		t.Errorf("admin route without ROLE_ADMIN: %d", resp.StatusCode())
	}
	// /account/subscriptions stays 501 by design (docs/decisions/0003-http-surface-and-routing.md), so it shows the request got past auth.
	if resp := do(user, "GET", "/api/account/subscriptions"); resp.StatusCode() != 501 {
		t.Errorf("authenticated route: %d", resp.StatusCode())
	}
}

func TestMockAuthUsesConfiguredKindAndRoles(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, func(c *config.Config) {
		c.MockKind = "service"
		c.MockRoles = []string{"ROLE_M2M"}
	})
	p, err := s.deps.Auth.Authenticate(nil)
	if err != nil || p.Kind != "service" || p.HasRole(iam.RoleAdmin) || !p.HasRole(iam.RoleM2M) {
		t.Fatalf("mock principal %+v %v", p, err)
	}
	if resp := do(s, "GET", "/api/clients"); resp.StatusCode() != 403 {
		t.Errorf("mock principal without ROLE_ADMIN on an admin route: %d", resp.StatusCode())
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	a := string(do(s, "GET", "/api/help").Header.Peek("X-Request-ID"))
	b := string(do(s, "GET", "/api/nope").Header.Peek("X-Request-ID"))
	if a == "" || b == "" || a == b {
		t.Errorf("minted ids %q %q", a, b)
	}
	if got := string(do(s, "GET", "/api/help", "X-Request-ID", "abc-123").Header.Peek("X-Request-ID")); got != "abc-123" {
		t.Errorf("echoed id %q", got)
	}
	if got := string(do(s, "GET", "/api/help", "X-Request-ID", "bad id\x01").Header.Peek("X-Request-ID")); got == "bad id\x01" || got == "" {
		t.Errorf("unsafe id echoed: %q", got)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	type tc struct {
		name     string
		enabled  bool
		origins  []string
		origin   string
		wantACAO string
	}
	cases := []tc{
		{"loopback localhost", true, nil, "http://localhost:3000", "http://localhost:3000"},
		{"loopback 127", true, nil, "https://127.0.0.1:8443", "https://127.0.0.1:8443"},
		{"loopback v6", true, nil, "http://[::1]:5173", "http://[::1]:5173"},
		{"loopback no port", true, nil, "http://localhost", "http://localhost"},
		{"loopback refuses remote", true, nil, "https://evil.example", ""},
		{"loopback refuses lookalike", true, nil, "http://localhost.evil.example", ""},
		{"loopback refuses upper case", true, nil, "HTTP://LOCALHOST:3000", ""},
		{"loopback refuses path", true, nil, "http://localhost:3000/x", ""},
		{"wildcard", true, []string{"*"}, "https://any.example", "*"},
		{"allowlist hit", true, []string{"https://app.example"}, "https://app.example", "https://app.example"},
		{"allowlist miss", true, []string{"https://app.example"}, "https://other.example", ""},
		{"disabled", false, nil, "http://localhost:3000", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestServer(t, func(cfg *config.Config) { cfg.CORSEnabled = c.enabled; cfg.CORSAllowedOrigins = c.origins })
			resp := do(s, "GET", "/api/help", "Origin", c.origin)
			if got := string(resp.Header.Peek("Access-Control-Allow-Origin")); got != c.wantACAO {
				t.Errorf("simple request ACAO %q, want %q", got, c.wantACAO)
			}
			pre := do(s, "OPTIONS", "/api/entity/JSON", "Origin", c.origin, "Access-Control-Request-Method", "POST")
			if !c.enabled {
				if pre.StatusCode() == 204 {
					t.Error("preflight answered with CORS disabled")
				}
				return
			}
			if pre.StatusCode() != 204 {
				t.Fatalf("preflight status %d", pre.StatusCode())
			}
			if got := string(pre.Header.Peek("Access-Control-Allow-Origin")); got != c.wantACAO {
				t.Errorf("preflight ACAO %q, want %q", got, c.wantACAO)
			}
			if string(pre.Header.Peek("Access-Control-Allow-Methods")) != corsAllowMethods ||
				string(pre.Header.Peek("Access-Control-Max-Age")) != "86400" ||
				!strings.Contains(string(pre.Header.Peek("Access-Control-Allow-Headers")), "Authorization") ||
				!strings.Contains(string(pre.Header.Peek("Access-Control-Allow-Headers")), "Last-Event-ID") {
				t.Error("preflight headers missing")
			}
			if !strings.Contains(string(resp.Header.Peek("Vary")), "Origin") {
				t.Error("Vary: Origin missing")
			}
		})
	}
	// OPTIONS without Access-Control-Request-Method is an ordinary request.
	s := newTestServer(t)
	if resp := do(s, "OPTIONS", "/api/help", "Origin", "http://localhost"); resp.StatusCode() != 405 {
		t.Errorf("plain OPTIONS: %d, want 405", resp.StatusCode())
	}
}

func TestHelpEndpoints(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	idx := decode(t, do(s, "GET", "/api/help").Body())
	if idx["schema"] != float64(1) || idx["version"] == nil {
		t.Errorf("index envelope %v", idx)
	}
	topics := idx["topics"].([]any)
	if len(topics) == 0 {
		t.Fatal("no topics")
	}
	for _, tp := range topics {
		if _, ok := tp.(map[string]any)["body"]; ok {
			t.Fatal("index carries body")
		}
	}
	one := decode(t, do(s, "GET", "/api/help/cli").Body())
	for _, k := range []string{"topic", "title", "stability", "tagline", "see_also", "body"} {
		if _, ok := one[k]; !ok {
			t.Errorf("topic lacks %s", k)
		}
	}
	for _, bad := range []string{".cli", "cli.", "-cli", "cli-", "cl%20i", "cl$i"} {
		resp := do(s, "GET", "/api/help/"+bad)
		if resp.StatusCode() != 400 || decode(t, resp.Body())["properties"].(map[string]any)["errorCode"] != "BAD_REQUEST" {
			t.Errorf("%q: %d %s", bad, resp.StatusCode(), resp.Body())
		}
	}
	resp := do(s, "GET", "/api/help/no_such.topic")
	if resp.StatusCode() != 404 || decode(t, resp.Body())["properties"].(map[string]any)["errorCode"] != "HELP_TOPIC_NOT_FOUND" {
		t.Errorf("unknown topic: %d %s", resp.StatusCode(), resp.Body())
	}
}

func TestAdminListener(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, func(c *config.Config) { c.MetricsBearer = "s3cret"; c.MetricsRequireAuth = true })
	do(s, "GET", "/api/help")
	do(s, "GET", "/api/help/cli")
	h := s.adminHandler()
	call := func(path string, hdr ...string) *fasthttp.Response {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(path)
		for i := 0; i+1 < len(hdr); i += 2 {
			ctx.Request.Header.Set(hdr[i], hdr[i+1])
		}
		h(&ctx)
		var r fasthttp.Response
		ctx.Response.CopyTo(&r)
		return &r
	}
	if r := call("/livez"); r.StatusCode() != 200 || string(r.Body()) != "ok" {
		t.Errorf("livez %d %s", r.StatusCode(), r.Body())
	}
	if r := call("/readyz"); r.StatusCode() != 200 {
		t.Errorf("readyz %d", r.StatusCode())
	}
	if r := call("/metrics"); r.StatusCode() != 401 || !strings.Contains(string(r.Header.Peek("WWW-Authenticate")), "Bearer") {
		t.Errorf("metrics without bearer: %d", r.StatusCode())
	}
	if r := call("/metrics", "Authorization", "Bearer wrong"); r.StatusCode() != 401 {
		t.Errorf("metrics with a wrong bearer: %d", r.StatusCode())
	}
	r := call("/metrics", "Authorization", "Bearer s3cret")
	body := string(r.Body())
	for _, want := range []string{
		`http_requests_total{route="/help",method="GET",status="200"} 1`,
		`http_requests_total{route="/help/{topic}",method="GET",status="200"} 1`,
		`http_request_duration_seconds_bucket{route="/help",le="0.005"}`,
		`http_requests_in_flight`,
		`go_goroutines`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	s.draining.Store(true)
	if r := call("/readyz"); r.StatusCode() != 503 {
		t.Errorf("readyz while draining: %d", r.StatusCode())
	}

	down, err := New(config.Defaults(), Deps{Ready: func() bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/readyz")
	down.adminHandler()(&ctx)
	if ctx.Response.StatusCode() != 503 || !strings.HasPrefix(string(ctx.Response.Body()), "not ready\ndatabase: unreachable\n") {
		t.Errorf("readyz with storage down: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}

	// Membership that is not healthy holds readiness back too, and says so.
	gone, err := New(config.Defaults(), Deps{Ready: func() bool { return true },
		Membership: func() (bool, string) { return false, "membership: left the cluster" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx.Response.Reset()
	gone.adminHandler()(&ctx)
	if ctx.Response.StatusCode() != 503 || string(ctx.Response.Body()) != "not ready\nstorage: memory (no database)\nmembership: left the cluster\n" {
		t.Errorf("readyz with membership down: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}

	// The memory engine has no database to call reachable (issue 26); a
	// database engine's line says it was reached.
	pg := config.Defaults()
	pg.StorageBackend = "postgres"
	up, err := New(pg, Deps{Ready: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	ctx.Response.Reset()
	up.adminHandler()(&ctx)
	if string(ctx.Response.Body()) != "ready\ndatabase: reachable\nmembership: single node\n" {
		t.Errorf("readyz on postgres: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
