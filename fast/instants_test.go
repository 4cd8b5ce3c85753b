package fast

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Instants the engines cannot hold (int64 nanoseconds: before
// 1677-09-21T00:12:43.145224192Z or after 2262-04-11T23:47:16.854775807Z)
// are 400 naming the parameter on every endpoint that takes one. Before
// the fix a pointInTime after 2262 wrapped around to 1677 and answered 200
// as if nothing existed.
const (
	instantPastMax   = "2262-04-11T23:47:17Z"
	instantBeforeMin = "1677-09-21T00:12:43Z"
	instantNearMax   = "2262-04-11T23:47:16Z" // in range: reads the current data
)

// instantEndpoint is one request taking an instant; path and body hold
// %s for the instant (query values URL-escaped).
type instantEndpoint struct {
	name, method, path, body, param string
	// present is a substring of the 200 answer at instantNearMax showing
	// the seeded entity ("" to skip the in-range call).
	present string
}

func instantEndpoints(id string) []instantEndpoint {
	group := `{"type":"group","operator":"AND","conditions":[]}`
	return []instantEndpoint{
		{"get", "GET", "/entity/" + id + "?pointInTime=%s", "", "pointInTime", id},
		{"changes", "GET", "/entity/" + id + "/changes?pointInTime=%s", "", "pointInTime", "CREATE"},
		{"transitions", "GET", "/entity/" + id + "/transitions?pointInTime=%s", "", "pointInTime", "["},
		{"list", "GET", "/entity/inst/1?pointInTime=%s", "", "pointInTime", id},
		{"export ndjson", "GET", "/entity/ndjson/inst/1?pointInTime=%s", "", "pointInTime", id},
		{"stats", "GET", "/entity/stats?pointInTime=%s", "", "pointInTime", `"count":1`},
		{"stats by state", "GET", "/entity/stats/states?pointInTime=%s", "", "pointInTime", `"count":1`},
		{"stats for model", "GET", "/entity/stats/inst/1?pointInTime=%s", "", "pointInTime", `"count":1`},
		{"stats by state for model", "GET", "/entity/stats/states/inst/1?pointInTime=%s", "", "pointInTime", `"count":1`},
		{"grouped stats", "POST", "/entity/stats/inst/1/query", `{"groupBy":["$.k"],"pointInTime":"%s"}`, "pointInTime", `"count":1`},
		{"search direct", "POST", "/search/direct/inst/1?pointInTime=%s", group, "pointInTime", id},
		{"search array", "POST", "/search/inst/1?pointInTime=%s", group, "pointInTime", id},
		{"search async", "POST", "/search/async/inst/1?pointInTime=%s", group, "pointInTime", `"`},
		{"delete by model", "DELETE", "/entity/inst/1?pointInTime=%s", "", "pointInTime", ""},
	}
}

func TestInstantParametersRange(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newSearchEnv(t, engine, nil)
			env.lockedModel("A", "inst", 1, `{"k":"x"}`)
			id, _ := env.create("A", "inst", 1, `{"k":"x"}`)
			for _, ep := range instantEndpoints(id) {
				t.Run(ep.name, func(t *testing.T) {
					e := env.with(t)
					for _, v := range []string{instantPastMax, instantBeforeMin, "2300-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"} {
						p := instantCall(e.entityEnv, ep, v)
						code := "BAD_REQUEST"
						if ep.name == "grouped stats" {
							code = "MALFORMED_REQUEST"
						}
						props := p.problem(t, 400, code)
						if props["parameter"] != ep.param && props["field"] != ep.param {
							t.Fatalf("%s: the problem does not name %s: %s", v, ep.param, p.body)
						}
					}
					if ep.present == "" {
						return
					}
					r := instantCall(e.entityEnv, ep, instantNearMax)
					r.ok(t)
					if !strings.Contains(string(r.body), ep.present) {
						t.Fatalf("at %s the entity is missing (%q not in the answer): %s", instantNearMax, ep.present, r.body)
					}
				})
			}
		})
	}
}

func instantCall(e *entityEnv, ep instantEndpoint, v string) entityResp {
	e.t.Helper()
	path := ep.path
	if strings.Contains(path, "%s") {
		path = fmt.Sprintf(path, url.QueryEscape(v))
	}
	var body []byte
	if ep.body != "" {
		b := ep.body
		if strings.Contains(b, "%s") {
			b = fmt.Sprintf(b, v)
		}
		body = []byte(b)
	}
	return e.call("A", ep.method, path, body, "Content-Type", "application/json")
}

// Audit bounds are instants too.
func TestAuditTimeParametersRange(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newAuditEnv(t, engine)
			env.lockedModel("A", "inst", 1, `{"k":"x"}`)
			id, _ := env.create("A", "inst", 1, `{"k":"x"}`)
			for _, param := range []string{"fromUtcTime", "toUtcTime"} {
				for _, v := range []string{instantPastMax, instantBeforeMin} {
					r := env.call("A", "GET", "/audit/entity/"+id+"?"+param+"="+url.QueryEscape(v), nil)
					if p := r.problem(t, 400, "BAD_REQUEST"); p["parameter"] != param {
						t.Fatalf("%s=%s: %s", param, v, r.body)
					}
				}
			}
			r := env.call("A", "GET", "/audit/entity/"+id+"?toUtcTime="+url.QueryEscape(instantNearMax), nil).ok(t)
			if !strings.Contains(string(r.body), "CREATE") && !strings.Contains(string(r.body), "created") {
				t.Fatalf("audit to %s misses the create: %s", instantNearMax, r.body)
			}
		})
	}
}

// Stream data's pointTime is epoch milliseconds.
func TestStreamDataPointTimeRange(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			e.seedStream("t1", 3, 3)
			def := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC", "")
			for _, c := range []struct {
				pt string
				ok bool
			}{
				{"9223372036853", true}, // 2262-04-11T23:47:16.853Z: every row
				{"9223372036854", false},
				{"9223372036854775807", false},
				{"9223372036854775808", false},
				{"1e20", false},
				{`"now"`, false},
			} {
				t.Run(c.pt, func(t *testing.T) {
					body := `{"sdDef":` + def + `,"pointTime":` + c.pt + `,"offset":0,"length":10}`
					r := e.with(t).call("t1", "POST", "/platform-api/stream-data/get", []byte(body))
					if c.ok {
						var res fetchResult
						r.ok(t).decode(t, &res)
						if len(res.Rows) != 3 {
							t.Fatalf("%d rows at %s, want 3: %s", len(res.Rows), c.pt, r.body)
						}
						return
					}
					if p := r.problem(t, 400, "BAD_REQUEST"); p["field"] != "pointTime" {
						t.Fatalf("the problem does not name pointTime: %s", r.body)
					}
				})
			}
		})
	}
}

// POST /sql/query's pointTime (PostgreSQL only).
func TestSQLQueryPointTimeRange(t *testing.T) {
	t.Parallel()
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	env.create("A", "orders", 1, ordersSample)
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	for _, v := range []string{instantPastMax, instantBeforeMin} {
		r := env.queryResp("A", "shop", "SELECT count(*) AS n FROM orders", v)
		if p := r.problem(t, 400, "BAD_REQUEST"); p["field"] != "pointTime" {
			t.Fatalf("%s: %s", v, r.body)
		}
	}
	wantRows(t, "near the end of the range", env.query("A", "shop", "SELECT count(*) AS n FROM orders", instantNearMax), `{"n":1}`)
}
