package fast

import (
	"bufio"
	"net"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/config"
)

func newTestServer(t testing.TB, mutate ...func(*config.Config)) *Server {
	t.Helper()
	cfg := config.Defaults()
	for _, m := range mutate {
		m(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	s, err := New(cfg, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do runs one request through the whole middleware chain.
func do(s *Server, method, uri string, hdr ...string) *fasthttp.Response {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.SetHost("svc.test")
	for i := 0; i+1 < len(hdr); i += 2 {
		ctx.Request.Header.Set(hdr[i], hdr[i+1])
	}
	s.Handler()(&ctx)
	var r fasthttp.Response
	ctx.Response.CopyTo(&r)
	return &r
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	return m
}

// TestRouteSetsMatchWireContractAndOpenAPI: the router serves exactly the
// operations of docs/operations.md (contract and extensions, with their
// operation ids), and /openapi.json documents exactly what the router
// serves, extensions marked. It runs in any clone; the list itself is
// compared with the external contract by TestOperationsListMatchesWireContract.
func TestRouteSetsMatchWireContractAndOpenAPI(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	router := map[string]bool{}
	routerOps := map[string]string{}
	contractRoutes := 0
	for _, r := range s.Routes() {
		router[r.Method+" "+r.Path] = true
		routerOps[r.Method+" "+r.Path] = r.OpID
		if !isExtension(r.OpID) {
			contractRoutes++
		}
	}
	if contractRoutes != 87 {
		t.Errorf("router has %d contract operations, want 87", contractRoutes)
	}

	listed := map[string]bool{}
	for _, o := range requiredOperations(t) {
		listed[o.Key()] = true
		id, ok := routerOps[o.Key()]
		if !ok {
			continue // assertSameSet below reports it
		}
		if id != o.OpID {
			t.Errorf("%s: router operation id %s, docs/operations.md %s", o.Key(), id, o.OpID)
		}
		if isExtension(id) != o.Extension {
			t.Errorf("%s: extension %v in the router, %v in docs/operations.md", o.Key(), isExtension(id), o.Extension)
		}
	}
	assertSameSet(t, "router", router, "docs/operations.md", listed)

	resp := do(s, "GET", "/openapi.json")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(resp.Body(), &doc); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for p, item := range doc.Paths {
		for m := range item {
			served[strings.ToUpper(m)+" "+p] = true
		}
	}
	if want := contractPaths + len(extensionOnlyPaths()); len(doc.Paths) != want {
		t.Errorf("OpenAPI document has %d paths, want %d (71 of the contract, %d of extensions only)", len(doc.Paths), want, len(extensionOnlyPaths()))
	}
	assertSameSet(t, "router", router, "openapi", served)
	for p, item := range doc.Paths {
		for m, op := range item {
			o, _ := op.(map[string]any)
			for _, r := range s.Routes() {
				if r.Path == p && strings.EqualFold(r.Method, m) && isExtension(r.OpID) != (o["x-svc-extension"] == true) {
					t.Errorf("%s %s: x-svc-extension is %v, extension %v", m, p, o["x-svc-extension"], isExtension(r.OpID))
				}
			}
		}
	}
}

// contractPaths is the number of paths of the wire contract.
const contractPaths = 71

// extensionOnlyPaths are the paths that only extension routes use.
func extensionOnlyPaths() map[string]bool {
	out := map[string]bool{}
	for _, r := range extensionRoutes() {
		out[r.Path] = true
	}
	for _, r := range apiRoutes() {
		delete(out, r.Path)
	}
	return out
}

func assertSameSet(t *testing.T, an string, a map[string]bool, bn string, b map[string]bool) {
	t.Helper()
	var onlyA, onlyB []string
	for k := range a {
		if !b[k] {
			onlyA = append(onlyA, k)
		}
	}
	for k := range b {
		if !a[k] {
			onlyB = append(onlyB, k)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	if len(onlyA) > 0 || len(onlyB) > 0 {
		t.Errorf("only in %s: %v\nonly in %s: %v", an, onlyA, bn, onlyB)
	}
}

func TestEveryRouteAnswersUnderContextPath(t *testing.T) {
	t.Parallel()
	for _, cp := range []string{"/api", ""} {
		s := newTestServer(t, func(c *config.Config) { c.ContextPath = cp })
		for _, r := range s.Routes() {
			uri := cp + pathParam.ReplaceAllString(r.Path, "x")
			resp := do(s, r.Method, uri)
			if r.Handler == nil && resp.StatusCode() != 501 {
				t.Errorf("%s %s: status %d, want 501", r.Method, uri, resp.StatusCode())
				continue
			}
			if resp.StatusCode() == 501 {
				m := decode(t, resp.Body())
				props := m["properties"].(map[string]any)
				if props["errorCode"] != "NOT_IMPLEMENTED" {
					t.Errorf("%s %s: errorCode %v", r.Method, uri, props["errorCode"])
				}
			}
		}
	}
}

func TestProblemEnvelope(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	resp := do(s, "GET", "/api/no/such/route")
	if resp.StatusCode() != 404 || string(resp.Header.ContentType()) != "application/problem+json" {
		t.Fatalf("unknown route: %d %s", resp.StatusCode(), resp.Header.ContentType())
	}
	m := decode(t, resp.Body())
	want := map[string]any{"type": "about:blank", "title": "Not Found", "status": float64(404), "instance": "/no/such/route"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if d, _ := m["detail"].(string); !strings.HasPrefix(d, "NOT_FOUND: ") {
		t.Errorf("detail %q", d)
	}
	props := m["properties"].(map[string]any)
	if props["errorCode"] != "NOT_FOUND" || props["retryable"] != false {
		t.Errorf("properties %v", props)
	}
	if _, ok := m["ticket"]; ok {
		t.Error("4xx carries a ticket")
	}

	resp = do(s, "DELETE", "/api/model/")
	if resp.StatusCode() != 405 {
		t.Fatalf("wrong method: %d", resp.StatusCode())
	}
	if allow := string(resp.Header.Peek("Allow")); !strings.Contains(allow, "GET") {
		t.Errorf("Allow = %q", allow)
	}
	if decode(t, resp.Body())["properties"].(map[string]any)["errorCode"] != "METHOD_NOT_ALLOWED" {
		t.Error("405 errorCode")
	}
}

func TestServeOverLoopback(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := contextWithCancel()
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()

	conn, err := net.Dial("tcp", apiLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET /api/help HTTP/1.1\r\nHost: x\r\n\r\n"))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("status line %q", line)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
