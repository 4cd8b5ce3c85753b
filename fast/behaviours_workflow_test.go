package fast

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/compute"
	"svc/compute/member"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/internal/await"
)

// wfJSON is one workflow definition of schema 1.3.
func wfJSON(name, initial, states string, extra ...string) string {
	x := ""
	for _, e := range extra {
		x += e + ","
	}
	return `{"version":"1.3","name":"` + name + `",` + x + `"initialState":"` + initial + `","states":` + states + `}`
}

func imports(mode string, allowCycles bool, workflows ...string) string {
	return fmt.Sprintf(`{"importMode":%q,"allowCycles":%t,"workflows":[%s]}`, mode, allowCycles, strings.Join(workflows, ","))
}

type wfExport struct {
	Workflows []struct {
		Version string          `json:"version"`
		Name    string          `json:"name"`
		Active  *bool           `json:"active"`
		States  json.RawMessage `json:"states"`
	} `json:"workflows"`
}

func (e *behavEnv) export(name string) wfExport {
	e.t.Helper()
	var x wfExport
	e.call("A", "GET", "/model/"+name+"/1/workflow/export", nil).ok(e.t).decode(e.t, &x)
	return x
}

func b17ImportGating(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b17", 1, `{"a":1}`)
	p := "/model/b17/1/workflow/import"
	simple := func(version string) string {
		return `{"version":"` + version + `","name":"w","initialState":"S","states":{"S":{}}}`
	}
	for _, v := range []string{"1", "2.1"} {
		// Checked before the model: an unknown model still answers 400.
		env.call("A", "POST", "/model/b17-nope/1/workflow/import", []byte(imports("MERGE", false, simple(v)))).
			problem(t, 400, "WORKFLOW_SCHEMA_VERSION_UNSUPPORTED")
	}
	env.call("A", "POST", "/model/b17-nope/1/workflow/import", []byte(imports("MERGE", false, simple("1.3")))).problem(t, 404, "MODEL_NOT_FOUND")
	// Unknown keys in a workflow file are ignored; known keys keep their
	// type checks (docs/decisions/0016-workflow-definitions.md).
	if r := env.call("A", "POST", p, []byte(`{"workflows":[],"surprise":1}`)); r.status != 200 {
		t.Fatalf("unknown top-level key: got %d, want 200: %s", r.status, r.body)
	}
	env.call("A", "POST", p, []byte(`{"workflows":"none"}`)).problem(t, 400, "BAD_REQUEST")
	env.call("A", "POST", p, []byte(imports("UPSERT", false, simple("1.3")))).problem(t, 400, "BAD_REQUEST")
	env.workflows("A", "b17", 1, imports("replace", false, simple("1.3")))
	// "1.0" is read as 1.1 for the client templates (docs/decisions/0016-workflow-definitions.md).
	env.workflows("A", "b17", 1, imports("REPLACE", false, simple("1.0")))
	if x := env.export("b17"); len(x.Workflows) != 1 || x.Workflows[0].Version != "1.3" {
		t.Fatalf("export %+v", x)
	}
}

func b18ValidationMatrix(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b18", 1, `{"a":1}`)
	p := "/model/b18/1/workflow/import"
	proc := func(cfg string, mode string) string {
		return wfJSON("w", "S", `{"S":{"transitions":[{"name":"t","next":"S","manual":true,"processors":[{"name":"p","executionMode":"`+mode+`","config":`+cfg+`}]}]}}`)
	}
	loop := wfJSON("w", "A", `{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},"B":{"transitions":[{"name":"u","next":"A","manual":false}]}}`)
	for name, body := range map[string]string{
		"undeclared next":         imports("MERGE", false, wfJSON("w", "S", `{"S":{"transitions":[{"name":"t","next":"X","manual":true}]}}`)),
		"undeclared initialState": imports("MERGE", false, wfJSON("w", "X", `{"S":{}}`)),
		"duplicate transition":    imports("MERGE", false, wfJSON("w", "S", `{"S":{"transitions":[{"name":"t","next":"S","manual":true},{"name":"t","next":"S","manual":true}]}}`)),
		"bad executionMode":       imports("MERGE", false, proc(`{}`, "SOMETIMES")),
		"bad retryPolicy":         imports("MERGE", false, proc(`{"retryPolicy":"WHENEVER"}`, "SYNC")),
		"asyncResult":             imports("MERGE", false, proc(`{"asyncResult":true}`, "SYNC")),
		"crossoverToAsyncMs":      imports("MERGE", false, proc(`{"crossoverToAsyncMs":100}`, "SYNC")),
		"manual and schedule":     imports("MERGE", false, wfJSON("w", "S", `{"S":{"transitions":[{"name":"t","next":"S","manual":true,"schedule":{"delayMs":1000}}]}}`)),
		"delayMs 0":               imports("MERGE", false, wfJSON("w", "S", `{"S":{"transitions":[{"name":"t","next":"T","manual":false,"schedule":{"delayMs":0}}]},"T":{}}`)),
		"unguarded cycle":         imports("MERGE", false, loop),
		"empty REPLACE":           `{"importMode":"REPLACE","workflows":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			env.with(t).call("A", "POST", p, []byte(body)).problem(t, 400, "VALIDATION_FAILED")
		})
	}
	env.workflows("A", "b18", 1, imports("MERGE", true, loop))
	env.workflows("A", "b18", 1, imports("REPLACE", false, proc(`{"retryPolicy":"EXPONENTIAL"}`, "SYNC")))
}

func b19ImportModes(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b19", 1, `{"a":1}`)
	env.call("A", "GET", "/model/b19/1/workflow/export", nil).problem(t, 404, "WORKFLOW_NOT_FOUND")
	one := func(name, state string) string { return wfJSON(name, state, `{"`+state+`":{}}`) }
	names := func() string {
		var s []string
		for _, w := range env.export("b19").Workflows {
			active := w.Active == nil || *w.Active
			s = append(s, fmt.Sprintf("%s:%s:%t", w.Name, strings.Trim(string(w.States), "{}:\""), active))
		}
		return strings.Join(s, " ")
	}
	env.workflows("A", "b19", 1, imports("MERGE", false, one("a", "A1"), one("b", "B1")))
	env.workflows("A", "b19", 1, imports("MERGE", false, one("b", "B2"), one("c", "C1")))
	if got := names(); got != "a:A1:true b:B2:true c:C1:true" {
		t.Fatalf("after MERGE: %s", got)
	}
	env.workflows("A", "b19", 1, imports("REPLACE", false, one("d", "D1")))
	if got := names(); got != "d:D1:true" {
		t.Fatalf("after REPLACE: %s", got)
	}
	env.workflows("A", "b19", 1, imports("ACTIVATE", false, one("e", "E1")))
	if got := names(); got != "d:D1:false e:E1:true" {
		t.Fatalf("after ACTIVATE: %s", got)
	}
	for _, w := range env.export("b19").Workflows {
		if w.Version != "1.3" {
			t.Fatalf("export version %q", w.Version)
		}
	}
	// A scheduled timeoutMs round-trips as absent, 0 or positive.
	sched := wfJSON("s", "S", `{"S":{"transitions":[
	  {"name":"none","next":"T","manual":false,"schedule":{"delayMs":1000}},
	  {"name":"zero","next":"T","manual":false,"schedule":{"delayMs":1000,"timeoutMs":0}},
	  {"name":"some","next":"T","manual":false,"schedule":{"delayMs":1000,"timeoutMs":600000}}]},"T":{}}`)
	env.workflows("A", "b19", 1, imports("REPLACE", false, sched))
	states := string(env.export("b19").Workflows[0].States)
	for _, want := range []string{`"name":"none","next":"T","manual":false,"schedule":{"delayMs":1000}}`,
		`"schedule":{"delayMs":1000,"timeoutMs":0}`, `"schedule":{"delayMs":1000,"timeoutMs":600000}`} {
		if !strings.Contains(states, want) {
			t.Fatalf("export lost %s: %s", want, states)
		}
	}
}

func b20Cascade(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b20", 1, `{"year":2000}`)
	env.workflows("A", "b20", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{
	  "NEW":{"transitions":[
	    {"name":"modern","next":"MODERN","manual":false,"criterion":{"type":"simple","jsonPath":"$.year","operatorType":"GREATER_THAN","value":1999}},
	    {"name":"old","next":"OLD","manual":false},
	    {"name":"never","next":"MODERN","manual":false}]},
	  "MODERN":{"transitions":[{"name":"check","next":"CHECKED","manual":false}]},
	  "CHECKED":{"transitions":[{"name":"file","next":"FILED","manual":false}]},
	  "OLD":{},"FILED":{}}`)))
	id, tx := env.create("A", "b20", 1, `{"year":2020}`)
	if e := env.get("A", "/entity/"+id); e.Meta.State != "FILED" {
		t.Fatalf("modern entity in %s", e.Meta.State)
	}
	var makes []string
	for _, it := range env.trail("A", id, "") {
		if it.EventType == "TRANSITION_MAKE" {
			if it.TransactionID != tx {
				t.Fatalf("hop in transaction %s, want %s", it.TransactionID, tx)
			}
			makes = append(makes, *it.Details)
		}
	}
	if got := strings.Join(makes, "; "); got != `Transition "modern": NEW → MODERN; Transition "check": MODERN → CHECKED; Transition "file": CHECKED → FILED` {
		t.Fatalf("hops: %s", got)
	}
	id, _ = env.create("A", "b20", 1, `{"year":1990}`)
	if e := env.get("A", "/entity/"+id); e.Meta.State != "OLD" {
		t.Fatalf("old entity in %s (declaration order must pick \"old\" before \"never\")", e.Meta.State)
	}
	if got := trailKinds(env.trail("A", id, "")); !strings.Contains(got, "TRANSITION_NOT_MATCH_CRITERION TRANSITION_MAKE") {
		t.Fatalf("trail %s", got)
	}
}

func b21VisitLimit(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b21", 1, `{"n":1}`)
	env.workflows("A", "b21", 1, imports("REPLACE", false, wfJSON("self", "A", `{"A":{"transitions":[
	  {"name":"again","next":"A","manual":false,"criterion":{"type":"simple","jsonPath":"$.n","operatorType":"EQUALS","value":1}}]}}`)))
	r := env.call("A", "POST", "/entity/JSON/b21/1", []byte(`{"n":1}`))
	r.problem(t, 400, "WORKFLOW_FAILED")
	if !strings.Contains(string(r.body), `state machine aborted: state \"A\" visited 11 times (limit: 10)`) {
		t.Fatalf("detail %s", r.body)
	}
	// A guard that does not match lets the entity settle.
	id, _ := env.create("A", "b21", 1, `{"n":2}`)
	// The same loop reached by an update aborts it and leaves the entity.
	env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"n":1}`)).problem(t, 400, "WORKFLOW_FAILED")
	if e := env.get("A", "/entity/"+id); string(e.Data) != `{"n":2}` {
		t.Fatalf("an aborted update wrote %s", e.Data)
	}
	env.workflows("A", "b21", 1, imports("REPLACE", true, wfJSON("pair", "A", `{"A":{"transitions":[{"name":"t","next":"B","manual":false}]},
	  "B":{"transitions":[{"name":"u","next":"A","manual":false}]}}`)))
	r = env.call("A", "POST", "/entity/JSON/b21/1", []byte(`{"n":3}`))
	r.problem(t, 400, "WORKFLOW_FAILED")
	if !strings.Contains(string(r.body), `state machine aborted: state \"A\" visited 11 times (limit: 10)`) {
		t.Fatalf("2-cycle detail %s", r.body)
	}
	if n := env.count("A", "b21", 1); n != 1 {
		t.Fatalf("%d entities, want only the settled one", n)
	}
}

func b22ManualErrors(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b22", 1, `{"ok":true}`)
	env.workflows("A", "b22", 1, imports("REPLACE", false, wfJSON("w", "OPEN", `{"OPEN":{"transitions":[
	  {"name":"close","next":"CLOSED","manual":true,"criterion":{"type":"simple","jsonPath":"$.ok","operatorType":"EQUALS","value":true}},
	  {"name":"off","next":"CLOSED","manual":true,"disabled":true},
	  {"name":"later","next":"CLOSED","manual":false,"schedule":{"delayMs":3600000}}]},
	  "CLOSED":{}}`)))
	id, _ := env.create("A", "b22", 1, `{"ok":false}`)
	for _, name := range []string{"nope", "off", "later"} {
		env.call("A", "PUT", "/entity/JSON/"+id+"/"+name, []byte(`{"ok":true}`)).problem(t, 400, "TRANSITION_NOT_FOUND")
	}
	r := env.call("A", "PUT", "/entity/JSON/"+id+"/close", []byte(`{"ok":false}`))
	r.problem(t, 400, "WORKFLOW_FAILED")
	if !strings.Contains(string(r.body), `transition \"close\" criterion not matched`) {
		t.Fatalf("detail %s", r.body)
	}
	if e := env.get("A", "/entity/"+id); e.Meta.State != "OPEN" {
		t.Fatalf("state %s after refused transitions", e.Meta.State)
	}
	env.call("A", "PUT", "/entity/JSON/"+id+"/close", []byte(`{"ok":true}`)).ok(t)
	if e := env.get("A", "/entity/"+id); e.Meta.State != "CLOSED" {
		t.Fatalf("state %s", e.Meta.State)
	}
}

func b23Selection(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b23", 1, `{"kind":"x"}`)
	kind := func(v string) string {
		return `"criterion":{"type":"simple","jsonPath":"$.kind","operatorType":"EQUALS","value":"` + v + `"}`
	}
	env.workflows("A", "b23", 1, imports("REPLACE", false,
		wfJSON("inactive", "IN", `{"IN":{}}`, `"active":false`),
		wfJSON("apple", "APPLE", `{"APPLE":{"transitions":[{"name":"ripen","next":"SHARED","manual":true}]},"SHARED":{}}`, kind("apple")),
		wfJSON("any-a", "FIRST", `{"FIRST":{}}`, `"criterion":{"type":"simple","jsonPath":"$.kind","operatorType":"STARTS_WITH","value":"a"}`),
		wfJSON("pear", "PEAR", `{"PEAR":{"transitions":[{"name":"ripen","next":"SHARED","manual":true}]},"SHARED":{"transitions":[{"name":"eat","next":"EATEN","manual":true}]},"EATEN":{}}`, kind("pear")),
	))
	state := func(doc string) (string, string) {
		id, _ := env.create("A", "b23", 1, doc)
		return id, env.get("A", "/entity/"+id).Meta.State
	}
	if _, s := state(`{"kind":"apple"}`); s != "APPLE" {
		t.Fatalf("apple in %s", s)
	}
	if _, s := state(`{"kind":"avocado"}`); s != "FIRST" {
		t.Fatalf("avocado in %s", s)
	}
	pear, s := state(`{"kind":"pear"}`)
	if s != "PEAR" {
		t.Fatalf("pear in %s", s)
	}
	if _, s := state(`{"kind":"x"}`); s != "CREATED" {
		t.Fatalf("unmatched entity in %s, want the default workflow's CREATED", s)
	}
	// Updates go by state: SHARED is first declared by "apple", which has
	// no "eat", even though the pear was selected by "pear".
	env.call("A", "PUT", "/entity/JSON/"+pear+"/ripen", []byte(`{"kind":"pear"}`)).ok(t)
	env.call("A", "PUT", "/entity/JSON/"+pear+"/eat", []byte(`{"kind":"pear"}`)).problem(t, 400, "TRANSITION_NOT_FOUND")
}

func b24MemberJoin(t *testing.T, env *behavEnv) {
	for _, tc := range []struct {
		name, token string
		first       *ce.CloudEvent
		code        codes.Code
	}{
		{"without ROLE_M2M", "user-A", joinEvent(`{"id":"j","tags":["b24"]}`), codes.PermissionDenied},
		{"first not a join", "m2m-A", &ce.CloudEvent{Id: "x", Source: "t", SpecVersion: "1.0", Type: wire.TypeKeepAlive,
			Data: &ce.CloudEvent_TextData{TextData: `{"id":"j"}`}}, codes.InvalidArgument},
		{"tenant mismatch", "m2m-A", joinEvent(`{"id":"j","tags":["b24"],"joinedLegalEntityId":"B"}`), codes.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := env.rawStream(tc.token)
			_ = st.Send(tc.first)
			for {
				if _, err := st.Recv(); err != nil {
					if s, _ := status.FromError(err); s.Code() != tc.code {
						t.Fatalf("ended with %v, want %v", err, tc.code)
					}
					return
				}
			}
		})
	}
	for _, join := range []string{`{"id":"j1","tags":["b24"]}`, `{"tags":["b24"]}`} {
		st, cancel := env.rawStream("m2m-A")
		if err := st.Send(joinEvent(join)); err != nil {
			t.Fatal(err)
		}
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("join %s: %v", join, err)
		}
		var g wire.Greet
		if ev.GetType() != wire.TypeGreet || wire.Decode(ev, &g) != nil || g.MemberID == "" || g.MemberID != g.ID || g.JoinedLegalEntityID != "A" {
			t.Fatalf("join %s: greet %v", join, ev)
		}
		cancel()
	}
}

func joinEvent(payload string) *ce.CloudEvent {
	return &ce.CloudEvent{Id: "x", Source: "test", SpecVersion: "1.0", Type: wire.TypeJoin, Data: &ce.CloudEvent_TextData{TextData: payload}}
}

func b25SyncProcessor(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b25", 1, `{"n":1,"tag":"x"}`)
	env.workflows("A", "b25", 1, imports("REPLACE", false, wfJSON("w25", "NEW", `{"NEW":{"transitions":[{"name":"enrich","next":"ENRICHED","manual":false,"processors":[
	    {"name":"p-enrich","executionMode":"SYNC","config":{"calculationNodesTags":"b25","context":"ctx-25"}},
	    {"name":"p-blind","config":{"calculationNodesTags":"b25","attachEntity":false}}]}]},
	  "ENRICHED":{}}`)))
	calls := make(chan *member.Call, 8)
	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		calls <- c
		if c.Request.ProcessorName == "p-blind" {
			return nil, nil
		}
		var doc struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(c.Request.Payload.Data, &doc); err != nil {
			return nil, err
		}
		if doc.N == 13 {
			return nil, errors.New("no thanks")
		}
		return json.RawMessage(fmt.Sprintf(`{"n":%d,"tag":"enriched"}`, doc.N+100)), nil
	}}, "b25")
	id, tx := env.create("A", "b25", 1, `{"n":1,"tag":"x"}`)
	enrich, blind := <-calls, <-calls
	r := enrich.Request
	if r.ProcessorName != "p-enrich" || r.Workflow.Name != "w25" || r.Transition.Name != "enrich" || r.Parameters != "ctx-25" ||
		r.Payload == nil || string(r.Payload.Data) != `{"n":1,"tag":"x"}` || r.EntityID != id || r.TransactionID != tx {
		t.Fatalf("processor request %+v", r)
	}
	if enrich.Type != wire.TypeProcessorRequest || r.Transition.StateFrom != "NEW" || r.Transition.StateTo != "ENRICHED" ||
		r.Payload.Meta == nil || r.Payload.Meta.State != "NEW" || r.Payload.Meta.ID != id || r.Payload.Meta.ModelKey.Name != "b25" {
		t.Fatalf("processor request envelope %s %+v %+v", enrich.Type, r.Transition, r.Payload.Meta)
	}
	if enrich.AuthType != "user" || enrich.AuthID != "u-A" {
		t.Fatalf("dispatched for %s %s, want the requesting user", enrich.AuthType, enrich.AuthID)
	}
	if blind.Request.ProcessorName != "p-blind" || blind.Request.Payload != nil {
		t.Fatalf("attachEntity:false request carried %+v", blind.Request.Payload)
	}
	if e := env.get("A", "/entity/"+id); e.Meta.State != "ENRICHED" || string(e.Data) != `{"n":101,"tag":"enriched"}` {
		t.Fatalf("entity %+v %s", e.Meta, e.Data)
	}
	r2 := env.call("A", "POST", "/entity/JSON/b25/1", []byte(`{"n":13,"tag":"x"}`))
	r2.problem(t, 400, "WORKFLOW_FAILED")
	<-calls
	if !strings.Contains(string(r2.body), "processor p-enrich failed: processor dispatch failed: no thanks") {
		t.Fatalf("detail %s", r2.body)
	}
	if n := env.count("A", "b25", 1); n != 1 {
		t.Fatalf("%d entities, want the failed one not created", n)
	}
}

func b26FailureModes(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b26", 1, `{"n":1}`)
	env.workflows("A", "b26", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{"NEW":{"transitions":[
	  {"name":"nomember","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"b26-none"}}]},
	  {"name":"slow","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"b26-slow","responseTimeoutMs":300}}]},
	  {"name":"drop","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"b26-drop"}}]}]},
	  "DONE":{}}`)))
	id, _ := env.create("A", "b26", 1, `{"n":1}`)
	stays := func() {
		t.Helper()
		if e := env.get("A", "/entity/"+id); e.Meta.State != "NEW" || string(e.Data) != `{"n":1}` {
			t.Fatalf("entity moved: %+v %s", e.Meta, e.Data)
		}
	}
	retryable := func(r entityResp, code string) {
		t.Helper()
		if p := r.problem(t, 503, code); p["retryable"] != true {
			t.Fatalf("%s not retryable: %s", code, r.body)
		}
	}
	retryable(env.call("A", "PUT", "/entity/JSON/"+id+"/nomember", []byte(`{"n":2}`)), "NO_COMPUTE_MEMBER_FOR_TAG")
	stays()

	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
		return nil, nil
	}}, "b26-slow")
	start := time.Now()
	retryable(env.call("A", "PUT", "/entity/JSON/"+id+"/slow", []byte(`{"n":2}`)), "DISPATCH_TIMEOUT")
	// The member holds the call for a minute: an answer well before that
	// came from the 300 ms timeout, however loaded the machine is.
	if d := time.Since(start); d < 300*time.Millisecond || d > 30*time.Second {
		t.Fatalf("timed out after %v with responseTimeoutMs 300", d)
	}
	stays()

	// A member that drops its stream while the request is pending.
	before := env.compute.Members("A")
	st, cancel := env.rawStream("m2m-A")
	if err := st.Send(joinEvent(`{"id":"d","tags":["b26-drop"]}`)); err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Recv(); err != nil || ev.GetType() != wire.TypeGreet {
		t.Fatalf("greet: %v %v", ev, err)
	}
	await.Until(t, await.Long, func() bool { return env.compute.Members("A") == before+1 }, "compute member count")
	got := make(chan string, 1)
	go func() {
		for {
			ev, err := st.Recv()
			if err != nil {
				got <- "stream ended first: " + err.Error()
				return
			}
			if ev.GetType() == wire.TypeProcessorRequest {
				cancel()
				got <- ""
				return
			}
		}
	}()
	retryable(env.call("A", "PUT", "/entity/JSON/"+id+"/drop", []byte(`{"n":2}`)), "COMPUTE_MEMBER_DISCONNECTED")
	if msg := <-got; msg != "" {
		t.Fatal(msg)
	}
	stays()
}

func b27AsyncNewTx(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b27", 1, `{"n":1}`)
	env.workflows("A", "b27", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{"NEW":{"transitions":[{"name":"notify","next":"SENT","manual":false,"processors":[
	    {"name":"ping","executionMode":"ASYNC_NEW_TX","config":{"calculationNodesTags":"b27","responseTimeoutMs":3000}},
	    {"name":"stamp","executionMode":"SYNC","config":{"calculationNodesTags":"b27-sync"}}]}]},
	  "SENT":{}}`)))
	// The SYNC processor after it stamps the data it is given, so the
	// stored document shows whether the async one's output leaked.
	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		var doc struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(c.Request.Payload.Data, &doc); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprintf(`{"n":%d,"stamped":true}`, doc.N)), nil
	}}, "b27-sync")
	check := func(label string) {
		t.Helper()
		id, _ := env.create("A", "b27", 1, `{"n":1}`)
		e := env.get("A", "/entity/"+id)
		if e.Meta.State != "SENT" || string(e.Data) != `{"n":1,"stamped":true}` {
			t.Fatalf("%s: %+v %s", label, e.Meta, e.Data)
		}
		var results []string
		for _, it := range env.trail("A", id, "") {
			if it.EventType == "STATE_PROCESS_RESULT" {
				var d struct {
					Success bool   `json:"success"`
					Mode    string `json:"mode"`
				}
				if err := json.Unmarshal(it.Data, &d); err != nil {
					t.Fatalf("%s: result data %s", label, it.Data)
				}
				results = append(results, fmt.Sprintf("%s:%t", d.Mode, d.Success))
			}
		}
		want := "ASYNC_NEW_TX:" + fmt.Sprint(label == "succeeding member")
		if len(results) != 2 || results[0] != want || results[1] != "SYNC:true" {
			t.Fatalf("%s: results %v", label, results)
		}
	}
	check("no member")

	var mode atomic.Value
	mode.Store("fail")
	env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		switch mode.Load() {
		case "fail":
			return json.RawMessage(`{"n":999}`), errors.New("async failure")
		case "slow":
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
			}
			return nil, nil
		}
		return json.RawMessage(`{"n":999}`), nil
	}}, "b27")
	check("failing member")
	mode.Store("slow")
	check("timing out member")
	mode.Store("ok")
	check("succeeding member")
}

func b28FunctionCriterion(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "b28", 1, `{"n":1}`)
	fn := `{"type":"function","function":{"name":"is-ready","config":{"calculationNodesTags":"b28","context":"c28"}}}`
	env.workflows("A", "b28", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{"NEW":{"transitions":[
	    {"name":"auto","next":"READY","manual":false,"criterion":`+fn+`},
	    {"name":"push","next":"READY","manual":true,"criterion":`+fn+`}]},
	  "READY":{}}`)))
	reqs := make(chan *wire.Request, 8)
	env.member("A", member.Handlers{Criteria: func(ctx context.Context, c *member.Call) (bool, string, error) {
		if c.Type != wire.TypeCriteriaRequest {
			return false, "", errors.New("criteria handler got " + c.Type)
		}
		reqs <- c.Request
		var doc struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(c.Request.Payload.Data, &doc)
		if doc.N > 5 {
			return true, "", nil
		}
		return false, "n too small", nil
	}}, "b28")
	id, _ := env.create("A", "b28", 1, `{"n":1}`)
	r := <-reqs
	if r.CriteriaName != "is-ready" || r.Target != "TRANSITION" || r.Transition.Name != "auto" || r.Parameters != "c28" || r.EntityID != id {
		t.Fatalf("criteria request %+v", r)
	}
	if e := env.get("A", "/entity/"+id); e.Meta.State != "NEW" {
		t.Fatalf("automated transition fired against the criterion: %s", e.Meta.State)
	}
	var reason string
	for _, it := range env.trail("A", id, "") {
		if it.EventType == "TRANSITION_NOT_MATCH_CRITERION" {
			var d struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(it.Data, &d)
			reason = d.Reason
		}
	}
	if reason != "n too small" {
		t.Fatalf("audit reason %q", reason)
	}
	resp := env.call("A", "PUT", "/entity/JSON/"+id+"/push", []byte(`{"n":2}`))
	var p struct {
		Detail string `json:"detail"`
	}
	resp.decode(t, &p)
	resp.problem(t, 400, "WORKFLOW_FAILED")
	if !strings.HasSuffix(p.Detail, ": n too small") {
		t.Fatalf("detail %q", p.Detail)
	}
	for len(reqs) > 0 {
		<-reqs
	}
	env.call("A", "PUT", "/entity/JSON/"+id+"/push", []byte(`{"n":9}`)).ok(t)
	if e := env.get("A", "/entity/"+id); e.Meta.State != "READY" {
		t.Fatalf("state %s after a matching criterion", e.Meta.State)
	}
}

// bExtraPredicates: the small predicate rules of docs/decisions/0020-conditions.md, through
// transition criteria: NOT_EQUAL on an absent field does not match, LIKE is
// anchored and case-sensitive, 30 and "30" are alike on an INTEGER field,
// an empty AND group matches everything.
func bExtraPredicates(t *testing.T, env *behavEnv) {
	env.lockedModel("A", "bx", 1, `{"code":"abc","n":1,"opt":"y"}`)
	crit := func(path, op, value string) string {
		return `"criterion":{"type":"simple","jsonPath":"` + path + `","operatorType":"` + op + `","value":` + value + `}`
	}
	env.workflows("A", "bx", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{"NEW":{"transitions":[
	    {"name":"ne","next":"NE","manual":false,`+crit("$.opt", "NOT_EQUAL", `"x"`)+`},
	    {"name":"like","next":"LIKE","manual":false,`+crit("$.code", "LIKE", `"a_c%"`)+`},
	    {"name":"num","next":"NUM","manual":false,`+crit("$.n", "EQUALS", `"30"`)+`},
	    {"name":"all","next":"ALL","manual":false,"criterion":{"type":"group","operator":"AND","conditions":[]}}]},
	  "NE":{},"LIKE":{},"NUM":{},"ALL":{}}`)))
	for doc, want := range map[string]string{
		`{"code":"zzz","n":1,"opt":"y"}`: "NE",   // present and different: matches
		`{"code":"abcdef","n":1}`:        "LIKE", // absent opt: NOT_EQUAL does not match
		`{"code":"ABCd","n":30}`:         "NUM",  // LIKE is case-sensitive; "30" equals 30
		`{"code":"xabc","n":2}`:          "ALL",  // LIKE is anchored
	} {
		id, _ := env.create("A", "bx", 1, doc)
		if e := env.get("A", "/entity/"+id); e.Meta.State != want {
			t.Errorf("%s settled in %s, want %s", doc, e.Meta.State, want)
		}
	}
}

// b29KeepAlive runs on its own environment with a 100 ms keep-alive
// interval and a 1 s timeout (the default 10 s and 30 s, scaled).
func b29KeepAlive(t *testing.T) {
	env := newBehavEnv(t, "memory", compute.Config{KeepaliveInterval: 100 * time.Millisecond, KeepaliveTimeout: time.Second})
	env.lockedModel("A", "b29", 1, `{"n":1}`)
	env.workflows("A", "b29", 1, imports("REPLACE", false, wfJSON("w", "NEW", `{"NEW":{"transitions":[
	    {"name":"quiet","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"b29-quiet"}}]},
	    {"name":"lively","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"b29-lively"}}]}]},
	  "DONE":{}}`)))
	lively := env.member("A", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		return nil, nil
	}}, "b29-lively")

	st, _ := env.rawStream("m2m-A")
	if err := st.Send(joinEvent(`{"id":"q","tags":["b29-quiet"]}`)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	kas := 0
	var end error
	for {
		ev, err := st.Recv()
		if err != nil {
			end = err
			break
		}
		if ev.GetType() == wire.TypeKeepAlive {
			kas++
		}
	}
	elapsed := time.Since(start)
	if s, _ := status.FromError(end); s.Code() != codes.DeadlineExceeded {
		t.Fatalf("silent member ended with %v", end)
	}
	// Lower bound exact, upper bound generous (loaded machine): a
	// keep-alive that never fires would hang until the test deadline.
	if elapsed < time.Second || elapsed > 30*time.Second || kas < 2 {
		t.Fatalf("evicted after %v with %d keep-alives (interval 100 ms, timeout 1 s)", elapsed, kas)
	}
	id, _ := env.create("A", "b29", 1, `{"n":1}`)
	await.Until(t, await.Long, func() bool { return env.compute.Members("A") == 1 }, "compute member count")
	env.call("A", "PUT", "/entity/JSON/"+id+"/quiet", []byte(`{"n":1}`)).problem(t, 503, "NO_COMPUTE_MEMBER_FOR_TAG")
	select {
	case <-lively.Done():
		t.Fatalf("the acking member was evicted: %v", lively.Err())
	default:
	}
	env.call("A", "PUT", "/entity/JSON/"+id+"/lively", []byte(`{"n":1}`)).ok(t)
}
