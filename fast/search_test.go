package fast

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/internal/await"
)

func TestSearchAPI(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newSearchEnv(t, engine, nil)
			ids := seedSearch(env)
			t.Run("direct", func(t *testing.T) { searchDirect(t, env.with(t), ids) })
			t.Run("errors", func(t *testing.T) { searchErrors(t, env.with(t)) })
			t.Run("sort", func(t *testing.T) { searchSort(t, env.with(t), ids) })
			t.Run("pointInTime", func(t *testing.T) { searchPIT(t, env.with(t)) })
			t.Run("async", func(t *testing.T) { searchAsync(t, env.with(t), ids) })
			t.Run("tenants", func(t *testing.T) { searchTenants(t, env.with(t)) })
		})
	}
}

const matchAll = `{"type":"group","operator":"AND","conditions":[]}`

// seedSearch makes model prod/1 in tenant A with four entities; it returns
// their ids by name.
func seedSearch(env *searchEnv) map[string]string {
	env.lockedModel("A", "prod", 1, `{"name":"x","price":1.5,"flag":true,"tags":["t"],"nested":{"k":1}}`)
	ids := map[string]string{}
	for _, d := range []string{
		`{"name":"alpha","price":10,"flag":true,"tags":["red","blue"],"nested":{"k":1}}`,
		`{"name":"Beta","price":20,"flag":false,"tags":["green"],"nested":{"k":2}}`,
		`{"name":"gamma","price":30.5,"flag":true,"tags":[],"nested":{"k":3}}`,
		`{"name":"delta","flag":false,"tags":["red"],"nested":{"k":4}}`,
	} {
		var m struct{ Name string }
		json.Unmarshal([]byte(d), &m)
		ids[m.Name], _ = env.create("A", "prod", 1, d)
	}
	return ids
}

// ndjson splits a direct-search answer into envelopes.
func ndjson(t testing.TB, r entityResp) []envelope {
	t.Helper()
	if r.status != 200 || r.ctype != "application/x-ndjson" {
		t.Fatalf("got %d %s: %s", r.status, r.ctype, r.body)
	}
	var out []envelope
	for _, line := range bytes.Split(r.body, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e envelope
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, e)
	}
	if len(r.body) > 0 && r.body[len(r.body)-1] != '\n' {
		t.Fatalf("body does not end with a newline")
	}
	return out
}

func names(t testing.TB, es []envelope) string {
	var out []string
	for _, e := range es {
		var m struct{ Name string }
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Name)
	}
	return strings.Join(out, ",")
}

func (e *searchEnv) direct(tenant, query, cond string) entityResp {
	e.t.Helper()
	return e.call(tenant, "POST", "/search/direct/prod/1"+query, []byte(cond))
}

func searchDirect(t *testing.T, env *searchEnv, ids map[string]string) {
	all := ndjson(t, env.direct("A", "", matchAll))
	if len(all) != 4 {
		t.Fatalf("match-all returned %d", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Meta.ID >= all[i].Meta.ID {
			t.Fatalf("not in id order: %s then %s", all[i-1].Meta.ID, all[i].Meta.ID)
		}
	}
	if all[0].Type != "ENTITY" || all[0].Meta.ModelKey.Name != "prod" || all[0].Meta.State == "" {
		t.Fatalf("envelope %+v", all[0])
	}
	got := ndjson(t, env.direct("A", "", `{"type":"simple","jsonPath":"$.price","operatorType":"GREATER_THAN","value":15}`))
	if n := names(t, got); n != sortedNames(ids, "Beta", "gamma") {
		t.Fatalf("price > 15: %s", n)
	}
	// An entity without the field never matches a negated operator.
	got = ndjson(t, env.direct("A", "", `{"type":"simple","jsonPath":"$.price","operatorType":"NOT_EQUAL","value":10}`))
	if n := names(t, got); n != sortedNames(ids, "Beta", "gamma") {
		t.Fatalf("price != 10: %s", n)
	}
	got = ndjson(t, env.direct("A", "", `{"type":"simple","jsonPath":"$.tags[*]","operatorType":"EQUALS","value":"red"}`))
	if n := names(t, got); n != sortedNames(ids, "alpha", "delta") {
		t.Fatalf("tags[*] = red: %s", n)
	}
	got = ndjson(t, env.direct("A", "", `{"type":"group","operator":"OR","conditions":[
		{"type":"simple","jsonPath":"$.name","operatorType":"IEQUALS","value":"beta"},
		{"type":"lifecycle","field":"id","operatorType":"EQUALS","value":"`+ids["delta"]+`"}]}`))
	if n := names(t, got); n != sortedNames(ids, "Beta", "delta") {
		t.Fatalf("IEQUALS or id: %s", n)
	}
	if r := env.direct("A", "", `{"type":"group","operator":"OR","conditions":[]}`); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("empty OR: %d %q", r.status, r.body)
	}
	// Bounded-or-fail.
	env.direct("A", "?limit=3", matchAll).problem(t, 400, "SEARCH_RESULT_LIMIT")
	if n := len(ndjson(t, env.direct("A", "?limit=4", matchAll))); n != 4 {
		t.Fatalf("limit=4 returned %d", n)
	}
	for _, l := range []string{"0", "abc", "10001"} {
		env.direct("A", "?limit="+l, matchAll).problem(t, 400, "BAD_REQUEST")
	}
}

// sortedNames lists names in ascending order of their entity ids.
func sortedNames(ids map[string]string, ns ...string) string {
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			if ids[ns[j]] < ids[ns[i]] {
				ns[i], ns[j] = ns[j], ns[i]
			}
		}
	}
	return strings.Join(ns, ",")
}

func searchErrors(t *testing.T, env *searchEnv) {
	env.direct("A", "", `{}`).problem(t, 400, "BAD_REQUEST")
	env.direct("A", "", ``).problem(t, 400, "BAD_REQUEST")
	env.direct("A", "", `{"type":"simple","jsonPath":"$.price","operatorType":"BOGUS","value":1}`).problem(t, 400, "INVALID_CONDITION")
	env.direct("A", "", `{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":{"a":1}}`).problem(t, 400, "INVALID_CONDITION")
	// Structural errors come before the model lookup.
	env.call("A", "POST", "/search/direct/nope/1", []byte(`{"type":"simple","jsonPath":"$.price","operatorType":"BETWEEN","value":1}`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", "/search/direct/nope/1", []byte(matchAll)).problem(t, 404, "MODEL_NOT_FOUND")
	env.direct("A", "", `{"type":"simple","jsonPath":"$.nope","operatorType":"EQUALS","value":1}`).problem(t, 400, "INVALID_FIELD_PATH")
	env.direct("A", "", `{"type":"simple","jsonPath":"price","operatorType":"EQUALS","value":1}`).problem(t, 400, "INVALID_FIELD_PATH")
	env.direct("A", "", `{"type":"simple","jsonPath":"$.nested","operatorType":"EQUALS","value":1}`).problem(t, 400, "INVALID_FIELD_PATH")
	ndjson(t, env.direct("A", "", `{"type":"simple","jsonPath":"$.nested","operatorType":"NOT_NULL"}`))
	env.direct("A", "", `{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":"abc"}`).problem(t, 400, "CONDITION_TYPE_MISMATCH")
	p := env.direct("A", "?pointInTime=yesterday", matchAll).problem(t, 400, "BAD_REQUEST")
	if p["parameter"] != "pointInTime" {
		t.Fatalf("pointInTime error properties %v", p)
	}
}

func searchSort(t *testing.T, env *searchEnv, ids map[string]string) {
	q := func(sorts ...string) string {
		v := url.Values{"sort": sorts}
		return "?" + v.Encode()
	}
	if n := names(t, ndjson(t, env.direct("A", q("price:desc"), matchAll))); n != "gamma,Beta,alpha,delta" {
		t.Fatalf("price:desc: %s", n)
	}
	if n := names(t, ndjson(t, env.direct("A", q("$.price"), matchAll))); n != "alpha,Beta,gamma,delta" {
		t.Fatalf("price asc: %s", n)
	}
	if n := names(t, ndjson(t, env.direct("A", q("name"), matchAll))); n != "Beta,alpha,delta,gamma" {
		t.Fatalf("name asc (byte order): %s", n)
	}
	want := sortedNames(ids, "Beta", "delta") + "," + sortedNames(ids, "alpha", "gamma")
	if n := names(t, ndjson(t, env.direct("A", q("flag"), matchAll))); n != want {
		t.Fatalf("flag asc: %s, want %s", n, want)
	}
	all := ndjson(t, env.direct("A", q("@creationDate:desc"), matchAll))
	for i := 1; i < len(all); i++ {
		a, _ := time.Parse(time.RFC3339Nano, all[i-1].Meta.CreationDate)
		b, _ := time.Parse(time.RFC3339Nano, all[i].Meta.CreationDate)
		am, bm := a.UnixMilli(), b.UnixMilli()
		if am < bm || (am == bm && all[i-1].Meta.ID > all[i].Meta.ID) {
			t.Fatalf("@creationDate:desc out of order at %d: %+v", i, all)
		}
	}
	for _, bad := range [][]string{{"price:DESC"}, {"nope"}, {"tags"}, {"nested"}, {"@foo"}, {"price", "$.price"}, {"a", "b", "c", "d"}} {
		env.direct("A", q(bad...), matchAll).problem(t, 400, "INVALID_FIELD_PATH")
	}
}

func searchPIT(t *testing.T, env *searchEnv) {
	id, _ := env.create("A", "prod", 1, `{"name":"pit","price":1,"flag":true,"tags":[],"nested":{"k":9}}`)
	// Real sleeps: writes are stamped with the wall clock, and the point
	// in time must fall strictly between the two revisions.
	time.Sleep(5 * time.Millisecond)
	at := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"name":"pit","price":2,"flag":true,"tags":[],"nested":{"k":9}}`)).ok(t)
	cond := `{"type":"simple","jsonPath":"$.name","operatorType":"EQUALS","value":"pit"}`
	now := ndjson(t, env.direct("A", "", cond))
	then := ndjson(t, env.direct("A", "?pointInTime="+url.QueryEscape(at.Format(time.RFC3339Nano)), cond))
	if len(now) != 1 || len(then) != 1 || !strings.Contains(string(now[0].Data), `"price":2`) || !strings.Contains(string(then[0].Data), `"price":1`) {
		t.Fatalf("now %+v, then %+v", now, then)
	}
	old := ndjson(t, env.direct("A", "?pointInTime=2020-01-01T00:00:00Z", matchAll))
	if len(old) != 0 {
		t.Fatalf("a 2020 point in time returned %d", len(old))
	}
	env.call("A", "DELETE", "/entity/"+id, nil).ok(t)
}

func (e *searchEnv) waitJob(tenant, id string) map[string]any {
	e.t.Helper()
	return await.Value(e.t, 30*time.Second, func() (map[string]any, bool) {
		st := e.call(tenant, "GET", "/search/async/"+id+"/status", nil).ok(e.t).obj(e.t)
		if st["searchJobStatus"] != "RUNNING" {
			return st, true
		}
		if _, ok := st["finishTime"]; ok {
			e.t.Fatalf("RUNNING with finishTime: %v", st)
		}
		return st, false
	}, "job %s leaves RUNNING", id)
}

func searchAsync(t *testing.T, env *searchEnv, ids map[string]string) {
	var id string
	env.call("A", "POST", "/search/async/prod/1?sort=price:desc", []byte(matchAll)).ok(t).decode(t, &id)
	st := env.waitJob("A", id)
	if st["searchJobStatus"] != "SUCCESSFUL" || st["entitiesCount"] != float64(4) || st["finishTime"] == nil || st["expirationDate"] == nil {
		t.Fatalf("status %v", st)
	}
	// The snapshot stands as of submit time, whatever happens later.
	extra, _ := env.create("A", "prod", 1, `{"name":"late","price":99,"flag":true,"tags":[],"nested":{"k":5}}`)
	defer env.call("A", "DELETE", "/entity/"+extra, nil)
	var page struct {
		Content []envelope `json:"content"`
		Page    struct {
			Number, Size, TotalElements, TotalPages int
		} `json:"page"`
	}
	env.call("A", "GET", "/search/async/"+id+"?pageSize=3&pageNumber=0", nil).ok(t).decode(t, &page)
	if n := names(t, page.Content); n != "gamma,Beta,alpha" || page.Page.TotalElements != 4 || page.Page.TotalPages != 2 || page.Page.Size != 3 {
		t.Fatalf("page 0: %s %+v", n, page.Page)
	}
	env.call("A", "GET", "/search/async/"+id+"?pageSize=3&pageNumber=1", nil).ok(t).decode(t, &page)
	if n := names(t, page.Content); n != "delta" || page.Page.Number != 1 {
		t.Fatalf("page 1: %s %+v", n, page.Page)
	}
	env.call("A", "GET", "/search/async/"+id+"?pageSize=3&pageNumber=5", nil).ok(t).decode(t, &page)
	if len(page.Content) != 0 || page.Page.TotalElements != 4 {
		t.Fatalf("page past the end: %+v", page)
	}
	env.call("A", "GET", "/search/async/"+id+"?pageSize=x", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/search/async/"+id+"?pageSize=10001", nil).problem(t, 400, "BAD_REQUEST")
	env.call("A", "GET", "/search/async/"+id+"?pageNumber=-1", nil).problem(t, 400, "BAD_REQUEST")
	p := env.call("A", "PUT", "/search/async/"+id+"/cancel", nil).problem(t, 400, "SEARCH_JOB_ALREADY_TERMINAL")
	if p["currentStatus"] != "SUCCESSFUL" || p["snapshotId"] != id {
		t.Fatalf("terminal cancel properties %v", p)
	}
	// Invalid submits create no job; lookups of unknown or foreign jobs are 404.
	env.call("A", "POST", "/search/async/prod/1", []byte(`{"type":"simple","jsonPath":"$.nope","operatorType":"EQUALS","value":1}`)).problem(t, 400, "INVALID_FIELD_PATH")
	for _, path := range []string{"/status", "", "/cancel"} {
		method := "GET"
		if path == "/cancel" {
			method = "PUT"
		}
		env.call("B", method, "/search/async/"+id+path, nil).problem(t, 404, "SEARCH_JOB_NOT_FOUND")
		env.call("A", method, "/search/async/5e0c4d1a-0000-1000-8000-000000000000"+path, nil).problem(t, 404, "SEARCH_JOB_NOT_FOUND")
		env.call("A", method, "/search/async/not-a-uuid"+path, nil).problem(t, 400, "BAD_REQUEST")
	}
	_ = ids
}

func searchTenants(t *testing.T, env *searchEnv) {
	env.call("B", "POST", "/search/direct/prod/1", []byte(matchAll)).problem(t, 404, "MODEL_NOT_FOUND")
	env.lockedModel("B", "prod", 1, `{"name":"x","price":1.5,"flag":true,"tags":["t"],"nested":{"k":1}}`)
	env.create("B", "prod", 1, `{"name":"b-only","price":1,"flag":true,"tags":[],"nested":{"k":1}}`)
	if n := names(t, ndjson(t, env.direct("B", "", matchAll))); n != "b-only" {
		t.Fatalf("tenant B sees %s", n)
	}
	if n := len(ndjson(t, env.direct("A", "", matchAll))); n != 4 {
		t.Fatalf("tenant A sees %d", n)
	}
	_ = fmt.Sprint()
}
