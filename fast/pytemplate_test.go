package fast

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"svc/audit"
	"svc/entity"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
	"svc/workflow"
)

// newTemplateEnv serves the model, workflow, entity, search and audit APIs
// over one engine with the workflow engine wired, as a client template
// meets them.
func newTemplateEnv(t testing.TB, engine string) *entityEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var as storage.Audits
	var sr storage.Searcher
	if engine == "postgres" {
		db := newEntityPostgres(t)
		ms, es, as, sr = db.Models(), db.Entities(), db.Audits(), db.Search(time.Minute)
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, es, as, sr = db.Models(), db.Entities(), db.Audits(), db.Search()
	} else {
		m := memory.NewEntities()
		ms, es, as, sr = memory.NewModels(), m, m.Audits(), memory.NewSearch(m)
	}
	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)),
		entity.WithConditions(ssvc), entity.WithGroupMax(50))
	msvc.SetEntityCounter(esvc)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Search: ssvc, Audit: audit.New(as, es)})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc}
}

// pyCriteria builds a search body the way mcp-cyoda-quart-app's
// repository does from its field→value criteria (docs/decisions/0030-client-compatibility.md):
// state and current_state become lifecycle EQUALS, {"op": v} maps the
// template's short operators to its Cyoda names, anything else is a
// simple EQUALS on "$."+field; all in one AND group.
func pyCriteria(fields [][2]any) string {
	ops := map[string]string{"eq": "EQUALS", "ieq": "IEQUALS", "ne": "NOT_EQUALS", "contains": "CONTAINS", "icontains": "ICONTAINS",
		"gt": "GREATER_THAN", "lt": "LESS_THAN", "gte": "GREATER_THAN_OR_EQUAL", "lte": "LESS_THAN_OR_EQUAL",
		"startswith": "STARTS_WITH", "endswith": "ENDS_WITH", "in": "IN", "not_in": "NOT_IN"}
	var conds []map[string]any
	for _, f := range fields {
		name, v := f[0].(string), f[1]
		if name == "state" || name == "current_state" {
			conds = append(conds, map[string]any{"type": "lifecycle", "field": name, "operatorType": "EQUALS", "value": v})
			continue
		}
		op := "EQUALS"
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for k, mv := range m {
				op, v = ops[k], mv
			}
		}
		conds = append(conds, map[string]any{"type": "simple", "jsonPath": "$." + name, "operatorType": op, "value": v})
	}
	b, _ := json.Marshal(map[string]any{"type": "group", "operator": "AND", "conditions": conds})
	return string(b)
}

// pyWorkflow is a workflow file as the template ships it: stamped "1.0",
// an automated sorting step whose criteria use IN, NOT_IN and the
// current_state alias, and the update_transition loop its update() needs.
const pyWorkflow = `{"workflows":[{"version":"1.0","name":"Pet","desc":"pet lifecycle","initialState":"initial_state","active":true,
 "states":{
  "initial_state":{"transitions":[{"name":"sort_in","next":"available","manual":false,
     "criterion":{"type":"group","operator":"AND","conditions":[
       {"type":"simple","jsonPath":"$.category","operatorType":"IN","value":["cat","dog"]},
       {"type":"lifecycle","field":"current_state","operatorType":"EQUALS","value":"initial_state"}]}},
    {"name":"sort_out","next":"other","manual":false,
     "criterion":{"type":"simple","jsonPath":"$.category","operatorType":"NOT_IN","value":["cat","dog"]}}]},
  "available":{"transitions":[{"name":"update_transition","next":"available","manual":true},
    {"name":"adopt","next":"adopted","manual":true}]},
  "other":{"transitions":[{"name":"update_transition","next":"other","manual":true}]},
  "adopted":{"transitions":[]}}}],
 "importMode":"REPLACE"}`

// TestPythonTemplateReplay (issue 13 item 7) replays the requests of the
// current Python client template, bodies as it sends them, on both
// engines: workflow import, save, save_all, find_by_id, find_all,
// find_all_by_criteria on POST /search/{entity}/{version} (a JSON list back)
// with its operator spellings and the current_state field, update through
// update_transition with its extra query parameters, a search as at an
// earlier instant (isoformat, "+" arriving as a space), stats, changes,
// and the aliases in grouped statistics and delete by condition.
func TestPythonTemplateReplay(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			pythonTemplateReplay(t, newTemplateEnv(t, engine))
		})
	}
}

func pythonTemplateReplay(t *testing.T, env *entityEnv) {
	const tenant = "t-py"
	env.lockedModel(tenant, "pet", 1, `{"name":"x","category":"cat","age":1}`)
	hdr := []string{"Content-Type", "application/json"}
	env.call(tenant, "POST", "/model/pet/1/workflow/import", []byte(pyWorkflow), hdr...).ok(t)

	save := func(body string) string {
		t.Helper()
		var res []txResult
		env.call(tenant, "POST", "/entity/JSON/pet/1", []byte(body), hdr...).ok(t).decode(t, &res)
		if len(res) == 0 || len(res[0].EntityIDs) == 0 {
			t.Fatalf("save answer %+v", res)
		}
		return res[0].EntityIDs[0]
	}
	tom := save(`{"name": "Tom", "category": "cat", "age": 3}`)
	var batch []txResult
	env.call(tenant, "POST", "/entity/JSON/pet/1", []byte(`[{"name": "Rex", "category": "dog", "age": 5}, {"name": "Nemo", "category": "fish", "age": 1}]`), hdr...).
		ok(t).decode(t, &batch)
	if len(batch) != 1 || len(batch[0].EntityIDs) != 2 {
		t.Fatalf("save_all answer %+v", batch)
	}
	rex, nemo := batch[0].EntityIDs[0], batch[0].EntityIDs[1]
	names := map[string]string{tom: "Tom", rex: "Rex", nemo: "Nemo"}

	// find_by_id reads data and meta.state; the criteria sorted them.
	for id, want := range map[string]string{tom: "available", rex: "available", nemo: "other"} {
		if env := env.get(tenant, "/entity/"+id); env.Meta.State != want {
			t.Fatalf("%s: state %q, want %q", names[id], env.Meta.State, want)
		}
	}
	var all []envelope
	env.call(tenant, "GET", "/entity/pet/1", nil, hdr...).ok(t).decode(t, &all)
	if len(all) != 3 {
		t.Fatalf("find_all: %d entities", len(all))
	}

	find := func(query string, fields ...[2]any) string {
		t.Helper()
		r := env.call(tenant, "POST", "/search/pet/1"+query, []byte(pyCriteria(fields)), hdr...).ok(t)
		if !strings.Contains(r.ctype, "application/json") {
			t.Fatalf("search answered %q; the template parses only application/json", r.ctype)
		}
		var got []envelope
		r.decode(t, &got)
		var out []string
		for _, e := range got {
			if e.Type != "ENTITY" || e.Meta.ID == "" {
				t.Fatalf("search element without meta.id: %s", r.body)
			}
			out = append(out, names[e.Meta.ID])
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	cases := []struct {
		fields [][2]any
		want   string
	}{
		{[][2]any{{"current_state", "available"}}, "Rex Tom"},
		{[][2]any{{"state", "other"}}, "Nemo"},
		{[][2]any{{"age", map[string]any{"gte": 3}}}, "Rex Tom"},
		{[][2]any{{"age", map[string]any{"lte": 3}}}, "Nemo Tom"},
		{[][2]any{{"category", map[string]any{"in": []any{"cat", "fish"}}}}, "Nemo Tom"},
		{[][2]any{{"category", map[string]any{"not_in": []any{"cat", "fish"}}}}, "Rex"},
		{[][2]any{{"category", map[string]any{"ne": "cat"}}, {"current_state", "available"}}, "Rex"},
		{[][2]any{{"current_state", "available"}, {"age", map[string]any{"gte": 3}}, {"category", map[string]any{"in": []any{"cat", "dog"}}}}, "Rex Tom"},
		{[][2]any{{"name", "Nobody"}}, ""},
	}
	for _, tc := range cases {
		if got := find("", tc.fields...); got != tc.want {
			t.Errorf("criteria %v: got [%s], want [%s]", tc.fields, got, tc.want)
		}
	}
	if r := env.call(tenant, "POST", "/search/pet/1", []byte(pyCriteria([][2]any{{"name", "Nobody"}})), hdr...).ok(t); string(r.body) != "[]" {
		t.Fatalf("no match: %s", r.body)
	}

	// update(): PUT through update_transition with the template's flags.
	before := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	var upd txResult
	env.call(tenant, "PUT", "/entity/JSON/"+tom+"/update_transition?transactional=true&waitForConsistencyAfter=true",
		[]byte(`{"name": "Tom", "category": "cat", "age": 4}`), hdr...).ok(t).decode(t, &upd)
	if len(upd.EntityIDs) != 1 || upd.EntityIDs[0] != tom {
		t.Fatalf("update answer %+v", upd)
	}
	// Python's isoformat() put raw into the URL: its "+00:00" arrives as " 00:00".
	iso := strings.Replace(before.Format("2006-01-02T15:04:05.000000-07:00"), "Z", "+00:00", 1)
	pit := "?pointInTime=" + strings.ReplaceAll(url.QueryEscape(iso), "%2B", "+")
	if got := find(pit, [2]any{"age", 3}); got != "Tom" {
		t.Fatalf("search as at before the update: [%s]", got)
	}
	if got := find("", [2]any{"age", 3}); got != "" {
		t.Fatalf("search now for the old value: [%s]", got)
	}

	// count() reads the stats object, the history a list.
	var stats map[string]any
	env.call(tenant, "GET", "/entity/stats/pet/1", nil, hdr...).ok(t).decode(t, &stats)
	if stats["count"] != float64(3) {
		t.Fatalf("stats: %v", stats)
	}
	var changes []map[string]any
	env.call(tenant, "GET", "/entity/"+tom+"/changes", nil, hdr...).ok(t).decode(t, &changes)
	if len(changes) != 2 {
		t.Fatalf("changes: %v", changes)
	}

	// The aliases wherever a condition is accepted: grouped statistics ...
	var buckets []struct {
		GroupKey []struct {
			Value any `json:"value"`
		} `json:"groupKey"`
		Count int `json:"count"`
	}
	q := `{"groupBy":["state"],"condition":{"type":"group","operator":"AND","conditions":[
	  {"type":"simple","jsonPath":"$.category","operatorType":"IN","value":["cat","dog","fish"]},
	  {"type":"simple","jsonPath":"$.age","operatorType":"GREATER_THAN_OR_EQUAL","value":1},
	  {"type":"lifecycle","field":"current_state","operatorType":"NOT_IN","value":["adopted"]}]}}`
	env.call(tenant, "POST", "/entity/stats/pet/1/query", []byte(q), hdr...).ok(t).decode(t, &buckets)
	if got := fmt.Sprint(buckets); got != "[{[{available}] 2} {[{other}] 1}]" {
		t.Fatalf("grouped stats: %s", got)
	}
	// ... and delete by condition.
	del := `{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.category","operatorType":"NOT_IN","value":["cat","dog"]},
	  {"type":"lifecycle","field":"current_state","operatorType":"IN","value":["other"]},
	  {"type":"simple","jsonPath":"$.age","operatorType":"LESS_THAN_OR_EQUAL","value":1}]}`
	env.call(tenant, "DELETE", "/entity/pet/1?verbose=true", []byte(del), hdr...).ok(t)
	if got := find("", [2]any{"category", map[string]any{"in": []any{"cat", "dog", "fish"}}}); got != "Rex Tom" {
		t.Fatalf("after delete by condition: [%s]", got)
	}
	// delete_by_id and delete_all.
	env.call(tenant, "DELETE", "/entity/"+tom, nil, hdr...).ok(t)
	env.call(tenant, "DELETE", "/entity/pet/1", nil, hdr...).ok(t)
	if r := env.call(tenant, "POST", "/search/pet/1", []byte(pyCriteria(nil)), hdr...).ok(t); string(r.body) != "[]" {
		t.Fatalf("after delete_all: %s", r.body)
	}
}

// TestSearchArrayRouteErrors: the extension route answers errors as the
// direct search does, and an IN without an array is refused.
func TestSearchArrayRouteErrors(t *testing.T) {
	t.Parallel()
	env := newTemplateEnv(t, "memory")
	env.lockedModel("t1", "pet", 1, `{"name":"x","age":1}`)
	env.call("t1", "POST", "/search/nope/1", []byte(`{"type":"group","operator":"AND","conditions":[]}`)).problem(t, 404, "MODEL_NOT_FOUND")
	env.call("t1", "POST", "/search/pet/1", []byte(`{"type":"simple","jsonPath":"$.age","operatorType":"IN","value":3}`)).problem(t, 400, "INVALID_CONDITION")
	env.call("t1", "POST", "/search/pet/1", []byte(`{"type":"simple","jsonPath":"$.nope","operatorType":"IN","value":[3]}`)).problem(t, 400, "INVALID_FIELD_PATH")
	env.call("t1", "POST", "/search/pet/1", nil).problem(t, 400, "BAD_REQUEST")
	if r := env.call("t1", "GET", "/search/pet/1", nil); r.status != 405 {
		t.Fatalf("GET on the search route: %d %s", r.status, r.body)
	}
	// The contract routes beside it keep their meaning.
	if r := env.call("t1", "POST", "/search/direct/pet/1", []byte(`{"type":"group","operator":"AND","conditions":[]}`)); r.status != 200 || r.ctype != "application/x-ndjson" {
		t.Fatalf("direct search: %d %s", r.status, r.ctype)
	}
}

// TestFetchTransitionsLegacyEntityClass (docs/decisions/0014-entities.md, docs/decisions/0030-client-compatibility.md): the Python and legacy templates name the class
// com.cyoda.tdb.model.treenode.TreeNodeEntity; the model then comes from
// the entity, and the answer is the one for <name>.<version>.
func TestFetchTransitionsLegacyEntityClass(t *testing.T) {
	t.Parallel()
	env := newTemplateEnv(t, "memory")
	env.lockedModel("t1", "pet", 1, `{"name":"x","category":"cat","age":1}`)
	env.call("t1", "POST", "/model/pet/1/workflow/import", []byte(pyWorkflow)).ok(t)
	id, _ := env.create("t1", "pet", 1, `{"name":"Tom","category":"cat","age":3}`)
	var byName, legacy []string
	env.call("t1", "GET", "/platform-api/entity/fetch/transitions?entityClass=pet.1&entityId="+id, nil).ok(t).decode(t, &byName)
	env.call("t1", "GET", "/platform-api/entity/fetch/transitions?entityClass=com.cyoda.tdb.model.treenode.TreeNodeEntity&entityId="+id, nil).ok(t).decode(t, &legacy)
	if strings.Join(byName, ",") != "update_transition,adopt" || strings.Join(legacy, ",") != strings.Join(byName, ",") {
		t.Fatalf("transitions by name %v, legacy class %v", byName, legacy)
	}
}

// TestJavaTemplateSetupSequence (docs/decisions/0030-client-compatibility.md): the Java templates' start-up, request by request, on both
// engines: SIMPLE_VIEW export as an existence probe (404), SAMPLE_DATA
// import of {} (no sample files) and a repeated one, changeLevel
// STRUCTURAL and lock with empty bodies, workflow import REPLACE of a
// "1.0" file, export; then entity writes extend the empty locked model.
func TestJavaTemplateSetupSequence(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newTemplateEnv(t, engine)
			hdr := []string{"Content-Type", "application/json"}
			env.call("t1", "GET", "/model/export/SIMPLE_VIEW/order/1", nil, hdr...).problem(t, 404, "MODEL_NOT_FOUND")
			env.call("t1", "POST", "/model/import/JSON/SAMPLE_DATA/order/1", []byte(`{}`), hdr...).ok(t)
			env.call("t1", "POST", "/model/import/JSON/SAMPLE_DATA/order/1", []byte(`{}`), hdr...).ok(t)
			env.call("t1", "GET", "/model/export/SIMPLE_VIEW/order/1", nil, hdr...).ok(t)
			env.call("t1", "POST", "/model/order/1/changeLevel/STRUCTURAL", []byte{}, hdr...).ok(t)
			env.call("t1", "PUT", "/model/order/1/lock", []byte{}, hdr...).ok(t)
			wf := `{"workflows":[{"version":"1.0","name":"Order","desc":"d","initialState":"initial_state","active":true,
			  "states":{"initial_state":{"transitions":[{"name":"create","next":"created","manual":false}]},"created":{"transitions":[]}}}],
			  "importMode":"REPLACE"}`
			env.call("t1", "POST", "/model/order/1/workflow/import", []byte(wf), hdr...).ok(t)
			if r := env.call("t1", "GET", "/model/order/1/workflow/export", nil, hdr...).ok(t); !strings.Contains(string(r.body), `"initial_state"`) {
				t.Fatalf("workflow export: %s", r.body)
			}
			id, _ := env.create("t1", "order", 1, `{"orderId":"o-1","lines":[{"sku":"a","qty":2}],"total":12.5}`)
			if st := env.get("t1", "/entity/"+id).Meta.State; st != "created" {
				t.Fatalf("state %q", st)
			}
			r := env.call("t1", "GET", "/model/export/SIMPLE_VIEW/order/1", nil).ok(t)
			for _, f := range []string{"orderId", "sku", "total"} {
				if !strings.Contains(string(r.body), f) {
					t.Fatalf("the write did not extend the model with %s: %s", f, r.body)
				}
			}
		})
	}
}

// TestEntityPutIgnoresTemplateFlags (docs/decisions/0030-client-compatibility.md):
// the templates' PUT carries transactional, waitForConsistencyAfter and
// transactionTimeoutMillis; they are ignored, and the answer is the bare
// {transactionId, entityIds} object, for the loopback and a named
// transition, on both engines.
func TestEntityPutIgnoresTemplateFlags(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newTemplateEnv(t, engine)
			env.lockedModel("t1", "pet", 1, `{"name":"x","category":"cat","age":1}`)
			env.call("t1", "POST", "/model/pet/1/workflow/import", []byte(pyWorkflow)).ok(t)
			id, _ := env.create("t1", "pet", 1, `{"name":"Tom","category":"cat","age":3}`)
			const flags = "?transactional=false&waitForConsistencyAfter=true&transactionTimeoutMillis=5000"
			for _, c := range []struct{ path, body, state string }{
				{"/entity/JSON/" + id + flags, `{"name":"Tom","category":"cat","age":4}`, "available"},
				{"/entity/JSON/" + id + "/adopt" + flags, `{"name":"Tom","category":"cat","age":5}`, "adopted"},
			} {
				var r txResult
				env.call("t1", "PUT", c.path, []byte(c.body), "Content-Type", "application/json").ok(t).decode(t, &r)
				got := env.get("t1", "/entity/"+id)
				if len(r.EntityIDs) != 1 || r.EntityIDs[0] != id || r.TransactionID == "" || got.Meta.TransactionID != r.TransactionID ||
					got.Meta.State != c.state || string(got.Data) != c.body {
					t.Fatalf("PUT %s: answer %+v, entity %+v %s", c.path, r, got.Meta, got.Data)
				}
			}
		})
	}
}
