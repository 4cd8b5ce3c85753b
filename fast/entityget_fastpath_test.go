package fast

import (
	"strings"
	"testing"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// TestEntityGetFastPathShadowsNoRoute: of the API routes and their
// aliases, only GET {ctx}/entity/{entityId} has a path the fast path
// takes (the routes svc registers besides these live outside
// {ctx}/entity/); canonical ids in either case do, other spellings and
// neighbours do not.
func TestEntityGetFastPathShadowsNoRoute(t *testing.T) {
	prefix := []byte("/api/entity/")
	paths := map[string]string{}
	for _, rt := range append(apiRoutes(), extensionRoutes()...) {
		paths["/api"+rt.Path] = rt.OpID
	}
	for _, al := range routeAliases {
		paths["/api"+al.path] = al.opID
	}
	for p, op := range paths {
		if !strings.HasPrefix(p, "/api/entity/") {
			continue
		}
		// A static segment in place of each parameter: the longest
		// static spelling a route could be confused with is its own.
		if entityGetPath(prefix, []byte(p)) {
			t.Errorf("%s (%s) would be taken by the entity get fast path", p, op)
		}
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/api/entity/d7982640-ea42-11f1-ba6f-ba823650d359", true},
		{"/api/entity/D7982640-EA42-11F1-BA6F-BA823650D359", true},
		{"/api/entity/d7982640ea4211f1ba6fba823650d359", false},
		{"/api/entity/{d7982640-ea42-11f1-ba6f-ba823650d35}", false},
		{"/api/entity/d7982640-ea42-11f1-ba6f-ba823650d35g", false},
		{"/api/entity/d7982640-ea42-11f1-ba6f-ba823650d359/", false},
		{"/api/entity/d7982640-ea42-11f1-ba6f-ba823650d359/changes", false},
		{"/api/entity/d7982640%2Dea42-11f1-ba6f-ba823650d35", false},
		{"/api/entity/stats", false},
		{"/api/entities/d7982640-ea42-11f1-ba6f-ba823650d35", false},
	} {
		if got := entityGetPath(prefix, []byte(tc.path)); got != tc.want {
			t.Errorf("%s: fast path %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestEntityCreateFastPathAgreesWithRouter: every path the create fast
// path takes, the router also sends to the create route with the same
// parameters. The paths are the routes under {ctx}/entity/ with each
// parameter spelled as a static segment of another route, a format, a
// number or an escape, and hand-written neighbours.
func TestEntityCreateFastPathAgreesWithRouter(t *testing.T) {
	prefix := []byte("/api/entity/")
	r := router.New()
	var tmpl []string
	for _, rt := range append(apiRoutes(), extensionRoutes()...) {
		if rt.Method != "POST" {
			continue
		}
		op := rt.OpID
		r.Handle(rt.Method, "/api"+rt.Path, func(ctx *fasthttp.RequestCtx) { ctx.SetUserValue("op", op) })
		if strings.HasPrefix(rt.Path, "/entity/") {
			tmpl = append(tmpl, "/api"+rt.Path)
		}
	}
	for _, al := range routeAliases {
		tmpl = append(tmpl, "/api"+al.path)
	}
	spellings := []string{"JSON", "XML", "stats", "query", "n", "1", "a%2Fb", ""}
	var paths []string
	for _, p := range tmpl {
		out := []string{""}
		for _, seg := range strings.Split(p, "/")[1:] {
			var next []string
			for _, o := range out {
				if strings.HasPrefix(seg, "{") {
					for _, sp := range spellings {
						next = append(next, o+"/"+sp)
					}
				} else {
					next = append(next, o+"/"+seg)
				}
			}
			out = next
		}
		paths = append(paths, out...)
	}
	paths = append(paths, "/api/entity/JSON/n/1/", "/api/entity/JSON//1", "/api/entity/JSON/n/", "/api/entity/JSON/n",
		"/api/entity/json/n/1", "/api/entity/JSONX/n/1", "/api/entity/XML/n/1/query", "/api/entityJSON/n/1", "/api/entity/JSON/n/1/2")
	taken := 0
	for _, p := range paths {
		i, j, ok := entityCreatePath(prefix, []byte(p))
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI(p)
		r.Handler(&ctx)
		op, _ := ctx.UserValue("op").(string)
		if !ok {
			continue
		}
		taken++
		rest := p[len(prefix):]
		if op != opCreate || routeParam(&ctx, "format") != rest[:i] || routeParam(&ctx, "entityName") != rest[i+1:j] ||
			routeParam(&ctx, "modelVersion") != rest[j+1:] {
			t.Errorf("%s: fast path takes it as create(%q, %q, %q); the router: %q (%q, %q, %q)", p, rest[:i], rest[i+1:j], rest[j+1:],
				op, routeParam(&ctx, "format"), routeParam(&ctx, "entityName"), routeParam(&ctx, "modelVersion"))
		}
	}
	if taken == 0 {
		t.Fatal("the fast path took no path")
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/api/entity/JSON/order/1", true},
		{"/api/entity/XML/order/1", true},
		{"/api/entity/JSON/na%20me/12", true},
		{"/api/entity/JSON/order/1/", false},
		{"/api/entity/JSON/order", false},
		{"/api/entity/JSON", false},
		{"/api/entity/YAML/order/1", false},
		{"/api/entity/stats/order/1/query", false},
	} {
		if _, _, got := entityCreatePath(prefix, []byte(tc.path)); got != tc.want {
			t.Errorf("%s: fast path %v, want %v", tc.path, got, tc.want)
		}
	}
}
