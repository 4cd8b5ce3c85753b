package workflow

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// setOf imports workflows (REPLACE, cycles allowed) and compiles them.
func setOf(t testing.TB, workflows ...string) *Set {
	t.Helper()
	if len(workflows) == 0 {
		s, _ := Compile(nil)
		return s
	}
	req, err := ParseImport([]byte(`{"importMode":"REPLACE","allowCycles":true,"workflows":[` + strings.Join(workflows, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Import(nil, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileStored(res.Stored)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wf(name, initial, states string, extra ...string) string {
	x := ""
	for _, e := range extra {
		x += e + ","
	}
	return `{"version":"1.3","name":"` + name + `",` + x + `"initialState":"` + initial + `","states":` + states + `}`
}

func newRun(data string) *Run {
	return &Run{Tenant: "t1", Auth: Auth{Kind: "user", ID: "u1", Roles: []string{"ROLE_USER"}},
		Entity:        &Entity{Meta: Meta{ID: "e1", ModelName: "m", ModelVersion: 1}, Data: []byte(data)},
		TransactionID: "tx-1", TxToken: "tok-1"}
}

func eventTypes(o *Outcome) string {
	var b []string
	for _, e := range o.Events {
		b = append(b, e.Type)
	}
	return strings.Join(b, " ")
}

func findEvent(o *Outcome, typ string) *Event {
	for i := range o.Events {
		if o.Events[i].Type == typ {
			return &o.Events[i]
		}
	}
	return nil
}

func engine(d ProcessorDispatcher) *Engine {
	return &Engine{Criteria: &fakeEvaluator{}, Dispatcher: d,
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
}

func TestDefaultWorkflowLifecycle(t *testing.T) {
	e, set, ctx := engine(nil), setOf(t), context.Background()
	r := newRun(`{"a":1}`)
	out, err := e.Create(ctx, set, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(out); got != "STATE_MACHINE_START WORKFLOW_FOUND TRANSITION_MAKE STATE_MACHINE_FINISH" {
		t.Fatalf("events %s", got)
	}
	ev := out.Events
	if ev[0].State != "" || ev[1].Details != `Workflow "default" selected (no criterion)` ||
		ev[2].State != "NONE" || ev[2].Details != `Transition "NEW": NONE → CREATED` ||
		ev[3].State != "CREATED" || string(ev[3].Data) != `{"success":true}` {
		t.Fatalf("event details: %+v", ev)
	}
	for _, x := range ev {
		if x.TransactionID != "tx-1" || x.EntityID != "e1" {
			t.Fatalf("event lacks ids: %+v", x)
		}
	}
	if out.State != "CREATED" || r.Entity.Meta.State != "CREATED" || out.Workflow != "default" {
		t.Fatalf("state %s/%s workflow %s", out.State, r.Entity.Meta.State, out.Workflow)
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "no_workflows_imported") {
		t.Fatalf("warnings %v", out.Warnings)
	}

	if out, err = e.Transition(ctx, set, r, "UPDATE"); err != nil || out.State != "CREATED" {
		t.Fatalf("UPDATE: %v %+v", err, out)
	}
	// A manual transition records no WORKFLOW_FOUND (docs/decisions/0017-workflow-engine.md)
	// (the workflow is the one holding the state, not a selection).
	if got := eventTypes(out); got != "STATE_MACHINE_START TRANSITION_MAKE STATE_MACHINE_FINISH" || out.Workflow != "default" {
		t.Fatalf("manual transition events %s (workflow %q)", got, out.Workflow)
	}
	if out, err = e.Loopback(ctx, set, r); err != nil || out.State != "CREATED" {
		t.Fatalf("loopback: %v", err)
	}
	if out, err = e.Transition(ctx, set, r, "DELETE"); err != nil || out.State != "DELETED" {
		t.Fatalf("DELETE: %v", err)
	}
	out, err = e.Transition(ctx, set, r, "UPDATE")
	wantCode(t, err, apierr.TransitionNotFound.String(), `transition "UPDATE" not found in state "DELETED"`)
	if findEvent(out, EventTransitionNotFound) == nil || r.Entity.Meta.State != "DELETED" {
		t.Fatal("no TRANSITION_NOT_FOUND event or state moved")
	}
}

// chain: A -(year=2024)-> B1, A -> B2 (fallback), B1 -> C automated, C terminal.
var chain = wf("chain", "A", `{
  "A":{"transitions":[
     {"name":"manualFirst","next":"C","manual":true},
     {"name":"toB1","next":"B1","manual":false,"criterion":`+eq("year", "2024")+`},
     {"name":"toB2","next":"B2","manual":false}]},
  "B1":{"transitions":[{"name":"toC","next":"C","manual":false}]},
  "B2":{},
  "C":{"transitions":[{"name":"back","next":"A","manual":true}]}}`)

func TestCascade(t *testing.T) {
	e, set, ctx := engine(nil), setOf(t, chain), context.Background()
	for _, tc := range []struct {
		data, state, events string
	}{
		{`{"year":2024}`, "C", "STATE_MACHINE_START WORKFLOW_FOUND TRANSITION_MAKE TRANSITION_MAKE STATE_MACHINE_FINISH"},
		{`{"year":2023}`, "B2", "STATE_MACHINE_START WORKFLOW_FOUND TRANSITION_NOT_MATCH_CRITERION TRANSITION_MAKE STATE_MACHINE_FINISH"},
	} {
		r := newRun(tc.data)
		out, err := e.Create(ctx, set, r)
		if err != nil {
			t.Fatal(err)
		}
		if out.State != tc.state || eventTypes(out) != tc.events {
			t.Errorf("%s: state %s events %s", tc.data, out.State, eventTypes(out))
		}
		if len(out.Warnings) != 0 {
			t.Errorf("warnings %v", out.Warnings)
		}
		if ev := findEvent(out, EventTransitionNotMatchCriteria); ev != nil {
			var d map[string]string
			_ = json.Unmarshal(ev.Data, &d)
			if d["workflowName"] != "chain" || d["transition"] != "toB1" || d["criterion"] != "simple" || d["reason"] != "criterion did not match" {
				t.Errorf("not-match data %s", ev.Data)
			}
		}
	}
	// A manual transition back to A cascades again, and the update's data
	// (now matching) decides.
	r := newRun(`{"year":2024}`)
	r.Entity.Meta.State = "C"
	out, err := e.Transition(ctx, set, r, "back")
	if err != nil || out.State != "C" || strings.Count(eventTypes(out), "TRANSITION_MAKE") != 3 {
		t.Fatalf("back: %v %s %s", err, out.State, eventTypes(out))
	}
	// An automated transition can also be fired by name.
	r = newRun(`{"year":1}`)
	r.Entity.Meta.State = "A"
	if out, err := e.Transition(ctx, set, r, "toB1"); err == nil || out.State != "" {
		wantCode(t, err, apierr.WorkflowFailed.String(), `transition "toB1" criterion not matched`)
	}
	if r.Entity.Meta.State != "A" {
		t.Fatalf("state moved to %s after a failed criterion", r.Entity.Meta.State)
	}
	if _, err := e.Transition(ctx, set, r, "toB2"); err != nil || r.Entity.Meta.State != "B2" {
		t.Fatalf("automated by name: %v %s", err, r.Entity.Meta.State)
	}
}

func TestVisitAndDepthLimits(t *testing.T) {
	ctx := context.Background()
	self := wf("self", "A", `{"A":{"transitions":[{"name":"again","next":"A","manual":false,"criterion":`+eq("go", "true")+`}]}}`)
	two := wf("two", "A", `{"A":{"transitions":[{"name":"ab","next":"B","manual":false}]},"B":{"transitions":[{"name":"ba","next":"A","manual":false}]}}`)
	for _, tc := range []struct {
		name, def string
		max       int
		msg       string
	}{
		{"guarded self-loop", self, 0, `state machine aborted: state "A" visited 11 times (limit: 10)`},
		{"two-cycle", two, 0, `state machine aborted: state "A" visited 11 times (limit: 10)`},
		{"configured limit", self, 3, `visited 4 times (limit: 3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine(nil)
			e.MaxStateVisits = tc.max
			out, err := e.Create(ctx, setOf(t, tc.def), newRun(`{"go":true}`))
			wantCode(t, err, apierr.WorkflowFailed.String(), tc.msg)
			if ev := findEvent(out, EventCancel); ev == nil || ev.Details != err.(*apierr.Error).Message {
				t.Fatalf("no CANCEL event: %s", eventTypes(out))
			}
			if findEvent(out, EventStateMachineFinish) != nil {
				t.Fatal("FINISH after CANCEL")
			}
		})
	}
	// A ring of 12 states visits each at most 10 times, so the depth cap of
	// 100 transitions stops it first.
	var states []string
	for i := 0; i < 12; i++ {
		next := string(rune('a' + (i+1)%12))
		states = append(states, `"`+string(rune('a'+i))+`":{"transitions":[{"name":"t","next":"`+next+`","manual":false}]}`)
	}
	e := engine(nil)
	out, err := e.Create(ctx, setOf(t, wf("ring", "a", "{"+strings.Join(states, ",")+"}")), newRun(`{}`))
	wantCode(t, err, apierr.WorkflowFailed.String(), "cascade depth exceeded (100) at state")
	if n := strings.Count(eventTypes(out), "TRANSITION_MAKE"); n != MaxCascadeDepth {
		t.Fatalf("%d transitions before the cap", n)
	}
}

func TestManualTransitionErrors(t *testing.T) {
	set := setOf(t, wf("w", "A", `{"A":{"transitions":[
	  {"name":"off","next":"B","manual":true,"disabled":true},
	  {"name":"later","next":"B","manual":false,"schedule":{"delayMs":1000}},
	  {"name":"guarded","next":"B","manual":true,"criterion":`+eq("ok", "true")+`}]},"B":{}}`))
	e, ctx := engine(nil), context.Background()
	for _, tc := range []struct{ name, code, msg string }{
		{"nope", apierr.TransitionNotFound.String(), `transition "nope" not found in state "A": transition not found`},
		{"off", apierr.TransitionNotFound.String(), `transition "off" is disabled in state "A"`},
		{"later", apierr.TransitionNotFound.String(), `transition "later" in state "A" is scheduled and fires automatically; it is not manually fireable`},
		{"guarded", apierr.WorkflowFailed.String(), `transition "guarded" criterion not matched`},
	} {
		r := newRun(`{"ok":false}`)
		r.Entity.Meta.State = "A"
		_, err := e.Transition(ctx, set, r, tc.name)
		wantCode(t, err, tc.code, tc.msg)
		if e, _ := apierr.As(err); e.Message != tc.msg {
			t.Errorf("message %q, want %q", e.Message, tc.msg)
		}
		if r.Entity.Meta.State != "A" {
			t.Errorf("%s moved the entity to %s", tc.name, r.Entity.Meta.State)
		}
	}
	// The scheduled transition is skipped by the cascade and reported for
	// arming when the entity settles in A.
	out, err := e.Create(ctx, set, newRun(`{}`))
	if err != nil || out.State != "A" || len(out.Scheduled) != 1 || out.Scheduled[0].Name != "later" {
		t.Fatalf("create: %v %+v", err, out)
	}
}

func TestWorkflowSelection(t *testing.T) {
	set := setOf(t,
		wf("inactive", "I", `{"I":{}}`, `"active":false`),
		wf("cats", "CAT", `{"CAT":{"transitions":[{"name":"m","next":"CAT","manual":true}]}}`, `"criterion":`+eq("kind", `"cat"`)),
		wf("dogs", "DOG", `{"DOG":{},"CAT":{}}`, `"criterion":`+eq("kind", `"dog"`)),
	)
	e, ctx := engine(nil), context.Background()
	for _, tc := range []struct{ data, wf, state, events string }{
		{`{"kind":"cat"}`, "cats", "CAT", "STATE_MACHINE_START WORKFLOW_FOUND STATE_MACHINE_FINISH"},
		{`{"kind":"dog"}`, "dogs", "DOG", "STATE_MACHINE_START WORKFLOW_SKIP WORKFLOW_FOUND STATE_MACHINE_FINISH"},
		{`{"kind":"cow"}`, "default", "CREATED", "STATE_MACHINE_START WORKFLOW_SKIP WORKFLOW_SKIP WORKFLOW_FOUND TRANSITION_MAKE STATE_MACHINE_FINISH"},
	} {
		out, err := e.Create(ctx, set, newRun(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		if out.Workflow != tc.wf || out.State != tc.state || eventTypes(out) != tc.events {
			t.Errorf("%s: %s %s %s", tc.data, out.Workflow, out.State, eventTypes(out))
		}
		if tc.wf == "default" && (len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "no_criterion_matched")) {
			t.Errorf("warnings %v", out.Warnings)
		}
	}
	// Existing entities: the first active workflow declaring the state,
	// criteria not re-evaluated ("cats" holds CAT even for a dog).
	r := newRun(`{"kind":"dog"}`)
	r.Entity.Meta.State = "CAT"
	out, err := e.Transition(ctx, set, r, "m")
	if err != nil || out.Workflow != "cats" {
		t.Fatalf("by state: %v %+v", err, out)
	}
	// No active workflow declares the state: manual fails, loopback is a
	// FORCE_SUCCESS no-op.
	r.Entity.Meta.State = "I"
	_, err = e.Transition(ctx, set, r, "m")
	wantCode(t, err, apierr.WorkflowFailed.String(), `no workflow contains state "I"`)
	out, err = e.Loopback(ctx, set, r)
	if err != nil || eventTypes(out) != "STATE_MACHINE_START FORCE_SUCCESS STATE_MACHINE_FINISH" || out.State != "I" {
		t.Fatalf("loopback: %v %s", err, eventTypes(out))
	}
}

// recorder is a processor that records its calls and answers with reply.
type recorder struct {
	calls []*ProcessorCall
	reply func(*ProcessorCall) (*ProcessorResult, error)
}

func (r *recorder) fn(ctx context.Context, c *ProcessorCall) (*ProcessorResult, error) {
	cp := *c
	r.calls = append(r.calls, &cp)
	return r.reply(c)
}

func procWF(mode, config string) string {
	return wf("p", "A", `{"A":{"transitions":[{"name":"go","next":"B","manual":false,
	  "processors":[{"name":"enrich","executionMode":"`+mode+`","config":`+config+`}]}]},"B":{}}`)
}

func TestSyncProcessor(t *testing.T) {
	ctx := context.Background()
	d := NewLocalDispatcher()
	rec := &recorder{reply: func(c *ProcessorCall) (*ProcessorResult, error) {
		return &ProcessorResult{Success: true, Data: json.RawMessage(`{"enriched":true}`), Warnings: []string{"w1"}}, nil
	}}
	d.Processor("enrich", rec.fn)
	e := engine(d)
	r := newRun(`{"a":1}`)
	out, err := e.Create(ctx, setOf(t, procWF("SYNC", `{"calculationNodesTags":"x, y","context":"ctx-1","responseTimeoutMs":1500}`)), r)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Entity.Data) != `{"enriched":true}` || out.State != "B" {
		t.Fatalf("data %s state %s", r.Entity.Data, out.State)
	}
	c := rec.calls[0]
	if c.Processor != "enrich" || c.Workflow != "p" || c.Transition != "go" || c.StateFrom != "A" || c.StateTo != "B" ||
		c.Meta.State != "A" || string(c.Data) != `{"a":1}` || c.Parameters != "ctx-1" || c.Timeout != 1500*time.Millisecond ||
		strings.Join(c.Tags, "|") != "x|y" || c.TxToken != "tok-1" || c.TransactionID != "tx-1" || c.Tenant != "t1" || c.Auth.ID != "u1" {
		t.Fatalf("call %+v", c)
	}
	if got := eventTypes(out); got != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING STATE_PROCESS_RESULT TRANSITION_MAKE STATE_MACHINE_FINISH" {
		t.Fatalf("events %s", got)
	}
	if ev := findEvent(out, EventStateProcessResult); string(ev.Data) != `{"success":true,"mode":"SYNC"}` {
		t.Fatalf("result data %s", ev.Data)
	}
	if ev := findEvent(out, EventPauseForProcessing); ev.Details != "Paused for processors: [enrich]" {
		t.Fatalf("pause details %s", ev.Details)
	}
	if len(out.Warnings) != 1 || out.Warnings[0] != "w1" {
		t.Fatalf("member warnings %v", out.Warnings)
	}

	// attachEntity false sends no data; a null result keeps the data.
	rec.calls = nil
	rec.reply = func(*ProcessorCall) (*ProcessorResult, error) {
		return &ProcessorResult{Success: true, Data: json.RawMessage(`null`)}, nil
	}
	r = newRun(`{"a":2}`)
	if _, err := e.Create(ctx, setOf(t, procWF("", `{"attachEntity":false}`)), r); err != nil {
		t.Fatal(err)
	}
	if rec.calls[0].Data != nil || string(r.Entity.Data) != `{"a":2}` || rec.calls[0].Timeout != 30*time.Second {
		t.Fatalf("attachEntity false: data %s, entity %s, timeout %v", rec.calls[0].Data, r.Entity.Data, rec.calls[0].Timeout)
	}
}

func TestProcessorFailures(t *testing.T) {
	ctx := context.Background()
	failing := func(ctx context.Context, c *ProcessorCall) (*ProcessorResult, error) {
		return &ProcessorResult{Success: false, Data: json.RawMessage(`{"x":1}`), Error: &MemberError{Code: "E", Message: "boom"}}, nil
	}
	slow := func(ctx context.Context, c *ProcessorCall) (*ProcessorResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, tc := range []struct {
		name, mode, config string
		fn                 LocalProcessor
		code, msg          string
		retryable          bool
	}{
		{"success false", "SYNC", `{}`, failing, apierr.WorkflowFailed.String(), "processor enrich failed: processor dispatch failed: boom", false},
		{"same tx", "ASYNC_SAME_TX", `{}`, failing, apierr.WorkflowFailed.String(), "processor enrich failed: processor dispatch failed: boom", false},
		{"no member", "SYNC", `{"calculationNodesTags":"nobody"}`, nil, apierr.NoComputeMemberForTag.String(), `tags "nobody"`, true},
		{"timeout", "SYNC", `{"responseTimeoutMs":20}`, slow, apierr.DispatchTimeout.String(), "within 20 ms", true},
		{"transport error", "SYNC", `{}`, func(context.Context, *ProcessorCall) (*ProcessorResult, error) {
			return nil, errors.New("stream send failed")
		}, apierr.WorkflowFailed.String(), "processor enrich failed: processor dispatch failed: stream send failed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewLocalDispatcher()
			if tc.fn != nil {
				d.Processor("enrich", tc.fn)
			}
			r := newRun(`{"a":1}`)
			out, err := engine(d).Create(ctx, setOf(t, procWF(tc.mode, tc.config)), r)
			wantCode(t, err, tc.code, tc.msg)
			if e, _ := apierr.As(err); e.Retryable != tc.retryable {
				t.Errorf("retryable %v", e.Retryable)
			}
			if got := eventTypes(out); got != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING STATE_PROCESS_RESULT STATE_PROCESS_RESULT" {
				t.Fatalf("events %s", got)
			}
			if string(out.Events[3].Data) != `{"success":false,"mode":"`+tc.mode+`"}` || string(out.Events[4].Data) != `{"success":false}` {
				t.Fatalf("result data %s %s", out.Events[3].Data, out.Events[4].Data)
			}
			if r.Entity.Meta.State != "A" || string(r.Entity.Data) != `{"a":1}` {
				t.Fatalf("entity changed: %s %s", r.Entity.Meta.State, r.Entity.Data)
			}
		})
	}
}

type savepoints struct{ n, rolledBack int }

func (s *savepoints) WithSavepoint(ctx context.Context, fn func(context.Context) error) error {
	s.n++
	err := fn(ctx)
	if err != nil {
		s.rolledBack++
	}
	return err
}

func TestAsyncNewTx(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		fn   LocalProcessor
		ok   bool
	}{
		{"succeeds, data discarded", func(context.Context, *ProcessorCall) (*ProcessorResult, error) {
			return &ProcessorResult{Success: true, Data: json.RawMessage(`{"new":1}`), Warnings: []string{"kept"}}, nil
		}, true},
		{"fails", func(context.Context, *ProcessorCall) (*ProcessorResult, error) {
			return &ProcessorResult{Success: false, Warnings: []string{"rolled back"}}, nil
		}, false},
		{"no member", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewLocalDispatcher()
			if tc.fn != nil {
				d.Processor("enrich", tc.fn)
			}
			sp := &savepoints{}
			r := newRun(`{"a":1}`)
			r.Savepoints = sp
			var logs bytes.Buffer
			e := engine(d)
			e.Log = slog.New(slog.NewTextHandler(&logs, nil))
			out, err := e.Create(ctx, setOf(t, procWF("ASYNC_NEW_TX", `{}`)), r)
			if err != nil {
				t.Fatal(err)
			}
			if out.State != "B" || string(r.Entity.Data) != `{"a":1}` {
				t.Fatalf("state %s data %s", out.State, r.Entity.Data)
			}
			if got := eventTypes(out); got != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING STATE_PROCESS_RESULT TRANSITION_MAKE STATE_MACHINE_FINISH" {
				t.Fatalf("events %s", got)
			}
			ev := findEvent(out, EventStateProcessResult)
			want := `{"success":` + map[bool]string{true: "true", false: "false"}[tc.ok] + `,"mode":"ASYNC_NEW_TX"}`
			if string(ev.Data) != want {
				t.Fatalf("result %s, want %s", ev.Data, want)
			}
			if sp.n != 1 || (sp.rolledBack == 1) == tc.ok {
				t.Fatalf("savepoints %+v", sp)
			}
			if warned := strings.Contains(logs.String(), "level=WARN msg=\"ASYNC_NEW_TX processor failed; transition continues\""); warned == tc.ok {
				t.Fatalf("WARN logged %t for a processor that succeeded %t: %s", warned, tc.ok, logs.String())
			}
			// The failed run's buffered effects are rolled back with it.
			if w := strings.Join(out.Warnings, ","); (w == "kept") != tc.ok || strings.Contains(w, "rolled back") {
				t.Fatalf("warnings %q", w)
			}
		})
	}
}

type segmenter struct {
	states []string
	events [][]string
	err    error
}

func (s *segmenter) CommitBeforeDispatch(ctx context.Context, sg *Segment) (string, error) {
	s.states = append(s.states, sg.Entity.Meta.State+" "+string(sg.Entity.Data))
	var types []string
	for _, e := range sg.Events {
		types = append(types, e.Type)
	}
	s.events = append(s.events, types)
	if sg.StartNewTx {
		return "tok-post", s.err
	}
	return "", s.err
}

func TestCommitBeforeDispatchAndInternalized(t *testing.T) {
	ctx := context.Background()
	var token string
	d := NewLocalDispatcher()
	d.Processor("enrich", func(ctx context.Context, c *ProcessorCall) (*ProcessorResult, error) {
		token = c.TxToken
		return &ProcessorResult{Success: true, Data: json.RawMessage(`{"b":2}`)}, nil
	})
	set := setOf(t, procWF("COMMIT_BEFORE_DISPATCH", `{"startNewTxOnDispatch":true}`))
	r := newRun(`{"a":1}`)
	_, err := engine(d).Create(ctx, set, r)
	wantCode(t, err, apierr.WorkflowFailed.String(), "COMMIT_BEFORE_DISPATCH needs the entity in a transaction of its own")

	seg := &segmenter{}
	r = newRun(`{"a":1}`)
	r.Segmenter = seg
	out, err := engine(d).Create(ctx, set, r)
	if err != nil || out.State != "B" || string(r.Entity.Data) != `{"b":2}` {
		t.Fatalf("%v %+v %s", err, out, r.Entity.Data)
	}
	if len(seg.states) != 1 || seg.states[0] != `A {"a":1}` || token != "tok-post" || out.Segments != 1 {
		t.Fatalf("segment at %v, token %q, %d segments", seg.states, token, out.Segments)
	}
	// TX_pre took the events up to the pause; the outcome keeps the rest.
	if fmt := strings.Join(seg.events[0], " "); fmt != "STATE_MACHINE_START WORKFLOW_FOUND PAUSE_FOR_PROCESSING" {
		t.Fatalf("TX_pre events %s", fmt)
	}
	if got := eventTypes(out); got != "STATE_PROCESS_RESULT TRANSITION_MAKE STATE_MACHINE_FINISH" {
		t.Fatalf("TX_post events %s", got)
	}
	seg = &segmenter{err: errors.New("disk full")}
	r = newRun(`{"a":1}`)
	r.Segmenter = seg
	_, err = engine(d).Create(ctx, set, r)
	wantCode(t, err, apierr.ServerError.String(), "commit before dispatch failed")
	// A classified segment failure (412 under If-Match) passes through.
	seg = &segmenter{err: apierr.New(apierr.EntityModified, "entity has been modified since last read")}
	r = newRun(`{"a":1}`)
	r.Segmenter = seg
	_, err = engine(d).Create(ctx, set, r)
	wantCode(t, err, "ENTITY_MODIFIED", "modified")

	internal := wf("p", "A", `{"A":{"transitions":[{"name":"go","next":"B","manual":false,"processors":[{"type":"internalized","name":"inner"}]}]},"B":{}}`)
	_, err = engine(d).Create(ctx, setOf(t, internal), newRun(`{}`))
	wantCode(t, err, apierr.WorkflowFailed.String(), `processor inner failed: execution type "internalized" is not yet implemented`)
}

func fnCrit(name, tags string) string {
	return `{"type":"function","function":{"name":"` + name + `","config":{"calculationNodesTags":"` + tags + `","context":"c1"}}}`
}

func TestFunctionCriteria(t *testing.T) {
	ctx := context.Background()
	var calls []*CriteriaCall
	var matches atomic.Bool
	reason := "too young"
	d := NewLocalDispatcher()
	d.Criteria("adult", func(ctx context.Context, c *CriteriaCall) (*CriteriaResult, error) {
		cp := *c
		calls = append(calls, &cp)
		return &CriteriaResult{Success: true, Matches: matches.Load(), Reason: reason}, nil
	})
	d.Criteria("broken", func(ctx context.Context, c *CriteriaCall) (*CriteriaResult, error) {
		return &CriteriaResult{Success: false, Error: &MemberError{Message: "cannot tell"}}, nil
	})
	set := setOf(t,
		wf("w", "A", `{"A":{"transitions":[
		  {"name":"auto","next":"B","manual":false,"criterion":`+fnCrit("adult", "ages")+`},
		  {"name":"man","next":"B","manual":true,"criterion":`+fnCrit("adult", "ages")+`},
		  {"name":"nested","next":"B","manual":true,"criterion":{"type":"group","operator":"AND","conditions":[`+eq("x", "1")+`,`+fnCrit("adult", "ages")+`]}},
		  {"name":"bad","next":"B","manual":true,"criterion":`+fnCrit("broken", "ages")+`}]},"B":{}}`, `"criterion":`+fnCrit("adult", "ages")))
	e := engine(d)

	// Workflow-level function criterion: target WORKFLOW, no transition.
	matches.Store(true)
	r := newRun(`{"x":1}`)
	if _, err := e.Create(ctx, set, r); err != nil {
		t.Fatal(err)
	}
	if calls[0].Target != TargetWorkflow || calls[0].Transition != "" || calls[0].Criteria != "adult" || calls[0].Parameters != "c1" ||
		calls[0].Meta.State != "" || string(calls[0].Data) != `{"x":1}` {
		t.Fatalf("workflow criteria call %+v", calls[0])
	}
	if calls[1].Target != TargetTransition || calls[1].Transition != "auto" || r.Entity.Meta.State != "B" {
		t.Fatalf("transition criteria call %+v", calls[1])
	}

	// Automated, no match: the entity stays and the audit carries the reason.
	matches.Store(false)
	r = newRun(`{"x":1}`)
	r.Entity.Meta.State = "A"
	out, err := e.Loopback(ctx, set, r)
	if err != nil || out.State != "A" {
		t.Fatalf("loopback: %v %s", err, out.State)
	}
	ev := findEvent(out, EventTransitionNotMatchCriteria)
	var data map[string]string
	_ = json.Unmarshal(ev.Data, &data)
	if data["reason"] != "too young" || data["criterion"] != "adult" {
		t.Fatalf("audit data %s", ev.Data)
	}
	// Manual, no match: the reason ends the detail.
	_, err = e.Transition(ctx, set, r, "man")
	wantCode(t, err, apierr.WorkflowFailed.String(), `transition "man" criterion not matched: too young`)
	// Nested in a group: evaluated through the evaluator's callback.
	matches.Store(true)
	n := len(calls)
	if _, err := e.Transition(ctx, set, r, "nested"); err != nil || r.Entity.Meta.State != "B" || len(calls) != n+1 {
		t.Fatalf("nested: %v %s %d", err, r.Entity.Meta.State, len(calls)-n)
	}
	// A failing member is an evaluation error.
	r.Entity.Meta.State = "A"
	_, err = e.Transition(ctx, set, r, "bad")
	wantCode(t, err, apierr.WorkflowFailed.String(), "failed to evaluate transition criterion: criteria broken failed: cannot tell")

	// A long reason is capped on a UTF-8 boundary.
	reason = strings.Repeat("é", MaxReasonBytes)
	matches.Store(false)
	_, err = e.Transition(ctx, set, r, "man")
	e2, _ := apierr.As(err)
	got := strings.TrimPrefix(e2.Message, `transition "man" criterion not matched: `)
	if len(got) > MaxReasonBytes || !strings.HasPrefix(reason, got) || len(got) < MaxReasonBytes-1 {
		t.Fatalf("reason of %d bytes", len(got))
	}
	// No member for the function's tag passes through as 503.
	_, err = engine(NewLocalDispatcher()).Transition(ctx, set, r, "man")
	wantCode(t, err, apierr.NoComputeMemberForTag.String(), `tags "ages"`)
}

func TestCriterionEvaluationError(t *testing.T) {
	set := setOf(t, wf("w", "A", `{"A":{"transitions":[{"name":"t","next":"A","manual":false,"criterion":{"type":"mystery"}}]}}`))
	_, err := engine(nil).Create(context.Background(), set, newRun(`{}`))
	wantCode(t, err, apierr.WorkflowFailed.String(), "failed to evaluate transition criterion: unknown condition type mystery")
	e := &Engine{}
	_, err = e.Create(context.Background(), set, newRun(`{}`))
	wantCode(t, err, apierr.WorkflowFailed.String(), "no condition evaluator")
}

func TestVisitCounterSpills(t *testing.T) {
	var v visitCounter
	for round := 1; round <= 3; round++ {
		for i := 0; i < 20; i++ {
			if n := v.inc(string(rune('a' + i))); n != round {
				t.Fatalf("state %d round %d counted %d", i, round, n)
			}
		}
	}
}

func TestTransitionAbortedEvent(t *testing.T) {
	ev := TransitionAborted("e1", "CREATED", "tx-2", "", "old\"tx", "new-tx", time.Unix(0, 0))
	var d map[string]string
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatalf("data %s: %v", ev.Data, err)
	}
	if ev.Type != EventTransitionAborted || d["reason"] != "ENTITY_MODIFIED" || d["transitionName"] != "loopback" ||
		d["expectedTxId"] != "old\"tx" || d["actualTxId"] != "new-tx" {
		t.Fatalf("%+v %v", ev, d)
	}
}

func TestAuditDataEscapes(t *testing.T) {
	raw := (&objBuilder{}).str("reason", "tab\there \"quoted\" é \u2028").boolean("ok", true).done()
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if d["reason"] != "tab\there \"quoted\" é \u2028" || d["ok"] != true {
		t.Fatalf("%v", d)
	}
}
