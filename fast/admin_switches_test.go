package fast

import (
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/platform/config"
	"svc/platform/switches"
)

// reqBody runs one request with a body through the whole middleware chain.
func reqBody(s *Server, method, uri, body string, hdr ...string) *fasthttp.Response {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.SetHost("svc.test")
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.SetBodyString(body)
	for i := 0; i+1 < len(hdr); i += 2 {
		ctx.Request.Header.Set(hdr[i], hdr[i+1])
	}
	s.Handler()(&ctx)
	var r fasthttp.Response
	ctx.Response.CopyTo(&r)
	return &r
}

// TestAdminSwitchRoutes (issue 26 item 1): GET|POST {ctx}/admin/log-level
// and {ctx}/admin/trace-sampler answer the compatible system's shapes and
// codes, need ROLE_ADMIN, refuse an unknown sampler or scope with 400, and
// change what the node's logger and tracer use.
func TestAdminSwitchRoutes(t *testing.T) {
	level := new(slog.LevelVar)
	sw := switches.New(level, switches.DefaultSampler, slog.New(slog.DiscardHandler))
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: fedHeaderAuth{}, Switches: sw})
	if err != nil {
		t.Fatal(err)
	}
	const tenant = "X-Test-Tenant"
	for _, tc := range []struct {
		method, path, body, roles string
		status                    int
		want                      string // exact body for 200, error code otherwise
	}{
		{"GET", "/api/admin/log-level", "", "", 200, `{"level":"info"}`},
		{"POST", "/api/admin/log-level", `{"level":"debug"}`, "", 200, `{"level":"debug","previous":"info"}`},
		{"GET", "/api/admin/log-level", "", "", 200, `{"level":"debug"}`},
		{"POST", "/api/admin/log-level", `{"level":"loud"}`, "", 200, `{"level":"info","previous":"debug"}`},
		{"POST", "/api/admin/log-level?scope=node", `{"level":"warn"}`, "", 200, `{"level":"warn","previous":"info"}`},
		// No bus: scope=cluster is this node (a cluster of one).
		{"POST", "/api/admin/log-level?scope=cluster", `{"level":"error"}`, "", 200, `{"level":"error","previous":"warn"}`},
		{"POST", "/api/admin/log-level?scope=galaxy", `{"level":"error"}`, "", 400, "BAD_REQUEST"},
		{"POST", "/api/admin/log-level", `{}`, "", 400, "BAD_REQUEST"},
		{"POST", "/api/admin/log-level", ``, "", 400, "BAD_REQUEST"},
		{"GET", "/api/admin/log-level", "", "ROLE_M2M", 403, "FORBIDDEN"},
		{"POST", "/api/admin/log-level", `{"level":"debug"}`, "ROLE_USER", 403, "FORBIDDEN"},

		{"GET", "/api/admin/trace-sampler", "", "", 200, `{"sampler":"always","parent_based":true}`},
		{"POST", "/api/admin/trace-sampler", `{"sampler":"ratio","ratio":0.1}`, "", 200, `{"sampler":"ratio","ratio":0.1,"parent_based":true}`},
		{"GET", "/api/admin/trace-sampler", "", "", 200, `{"sampler":"ratio","ratio":0.1,"parent_based":true}`},
		{"POST", "/api/admin/trace-sampler", `{"sampler":"never","parent_based":false}`, "", 200, `{"sampler":"never","parent_based":false}`},
		{"POST", "/api/admin/trace-sampler", `{"sampler":"sometimes"}`, "", 400, "BAD_REQUEST"},
		{"POST", "/api/admin/trace-sampler", `{"sampler":"ratio","ratio":2}`, "", 400, "BAD_REQUEST"},
		{"POST", "/api/admin/trace-sampler", `{"sampler":"always","ratio":0.5}`, "", 400, "BAD_REQUEST"},
		{"GET", "/api/admin/trace-sampler", "", "ROLE_M2M", 403, "FORBIDDEN"},
		{"GET", "/api/admin/trace-sampler", "", "", 200, `{"sampler":"never","parent_based":false}`},
	} {
		hdr := []string{tenant, "t1"}
		if tc.roles != "" {
			hdr = append(hdr, "X-Test-Roles", tc.roles)
		}
		r := reqBody(s, tc.method, tc.path, tc.body, hdr...)
		if r.StatusCode() != tc.status {
			t.Errorf("%s %s %s: %d %s", tc.method, tc.path, tc.body, r.StatusCode(), r.Body())
			continue
		}
		if tc.status == 200 {
			if string(r.Body()) != tc.want {
				t.Errorf("%s %s %s: %s, want %s", tc.method, tc.path, tc.body, r.Body(), tc.want)
			}
			continue
		}
		if got, _ := decode(t, r.Body())["properties"].(map[string]any)["errorCode"].(string); got != tc.want {
			t.Errorf("%s %s %s: %s, want %s", tc.method, tc.path, tc.body, r.Body(), tc.want)
		}
	}
	// The level the logger reads moved with the API.
	if level.Level() != slog.LevelError {
		t.Errorf("logger level %v after the changes, want ERROR", level.Level())
	}
}
