package fast

import (
	"strings"
	"testing"
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
