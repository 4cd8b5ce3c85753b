package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

func TestPredicateCriteriaEval(t *testing.T) {
	p := NewPredicateCriteria(0)
	ctx := context.Background()
	meta := Meta{ID: "e1", State: "NEW", CreationDate: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), TransitionForLatestSave: "loopback"}
	data := []byte(`{"year":2024,"name":"abc","tags":["x","y"],"price":10.0}`)
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{`{"type":"simple","jsonPath":"$.year","operatorType":"GREATER_THAN","value":2000}`, true},
		{`{"type":"simple","jsonPath":"$.year","operatorType":"LESS_THAN","value":2000}`, false},
		{`{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":10}`, true},
		{`{"type":"simple","jsonPath":"$.name","operatorType":"LIKE","value":"a_c%"}`, true},
		{`{"type":"simple","jsonPath":"$.name","operatorType":"LIKE","value":"A_c%"}`, false},
		{`{"type":"simple","jsonPath":"$.tags[*]","operatorType":"EQUALS","value":"y"}`, true},
		// A path the model may not know yet is no error, it just does not match.
		{`{"type":"simple","jsonPath":"$.missing","operatorType":"EQUALS","value":1}`, false},
		{`{"type":"simple","jsonPath":"$.missing","operatorType":"NOT_EQUAL","value":1}`, false},
		{`{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"NEW"}`, true},
		{`{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"DONE"}`, false},
		{`{"type":"lifecycle","field":"transitionForLatestSave","operatorType":"EQUALS","value":"loopback"}`, true},
		{`{"type":"lifecycle","field":"creationDate","operatorType":"GREATER_THAN","value":"2024-01-01T00:00:00Z"}`, true},
		{`{"type":"group","operator":"AND","conditions":[]}`, true},
		{`{"type":"group","operator":"OR","conditions":[{"type":"simple","jsonPath":"$.year","operatorType":"EQUALS","value":1},{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"NEW"}]}`, true},
		{`{"type":"group","operator":"NOT","conditions":[{"type":"simple","jsonPath":"$.year","operatorType":"EQUALS","value":2024}]}`, false},
	} {
		got, err := p.Eval(ctx, json.RawMessage(tc.cond), data, meta, nil)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.cond, got, err, tc.want)
		}
	}
	// Each distinct criterion was compiled once and is kept.
	before := len(p.compiled)
	if _, err := p.Eval(ctx, json.RawMessage(`{"type":"simple","jsonPath":"$.year","operatorType":"GREATER_THAN","value":2000}`), data, meta, nil); err != nil {
		t.Fatal(err)
	}
	if len(p.compiled) != before || before != 15 {
		t.Fatalf("compiled cache: %d entries, then %d", before, len(p.compiled))
	}
}

func TestPredicateCriteriaCacheBound(t *testing.T) {
	p := NewPredicateCriteria(2)
	for _, v := range []string{"1", "2", "3"} {
		cond := `{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":` + v + `}`
		ok, err := p.Eval(context.Background(), json.RawMessage(cond), []byte(`{"a":3}`), Meta{}, nil)
		if err != nil || ok != (v == "3") {
			t.Fatalf("value %s: %v %v", v, ok, err)
		}
		if len(p.compiled) > 2 {
			t.Fatalf("cache holds %d entries over its bound of 2", len(p.compiled))
		}
	}
}

func TestPredicateCriteriaErrors(t *testing.T) {
	p := NewPredicateCriteria(0)
	ctx := context.Background()
	// A condition that does not compile is a plain evaluation error, which
	// the engine reports as WORKFLOW_FAILED, not the predicate's own code.
	_, err := p.Eval(ctx, json.RawMessage(`{"type":"simple","jsonPath":"$.a","operatorType":"ALMOST","value":1}`), []byte(`{}`), Meta{}, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid criterion") {
		t.Fatalf("unknown operator: %v", err)
	}
	if _, ok := apierr.As(err); ok {
		t.Fatalf("compile error leaks a catalogue code: %v", err)
	}
	// A nested function condition needs the engine's caller.
	nested := json.RawMessage(`{"type":"group","operator":"AND","conditions":[{"type":"function","function":{"name":"f","config":{"calculationNodesTags":"t"}}}]}`)
	if _, err := p.Eval(ctx, nested, []byte(`{}`), Meta{}, nil); err == nil {
		t.Fatal("function condition evaluated without a caller")
	}
	// With one, it gets the whole function condition object, and its
	// classified errors pass through unchanged.
	var got json.RawMessage
	fn := func(_ context.Context, cond json.RawMessage) (bool, error) {
		got = append(got[:0], cond...)
		return true, nil
	}
	if ok, err := p.Eval(ctx, nested, []byte(`{}`), Meta{}, fn); !ok || err != nil {
		t.Fatalf("nested function: %v %v", ok, err)
	}
	var head struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(got, &head); err != nil || head.Type != "function" || head.Function.Name != "f" {
		t.Fatalf("function caller got %s (%v)", got, err)
	}
	noMember := NoMemberForTag("t")
	_, err = p.Eval(ctx, nested, []byte(`{}`), Meta{}, func(context.Context, json.RawMessage) (bool, error) { return false, noMember })
	if !errors.Is(err, noMember) {
		t.Fatalf("function error: %v", err)
	}
}

func TestPredicateCriteriaCheckCondition(t *testing.T) {
	p := NewPredicateCriteria(0)
	for _, tc := range []struct {
		cond string
		ok   bool
	}{
		{`{"type":"simple","jsonPath":"$.a.b","operatorType":"EQUALS","value":"x"}`, true},
		{`{"type":"function","function":{"name":"f"}}`, true},
		{`{"type":"group","operator":"NOT","conditions":[{"type":"simple","jsonPath":"$.a","operatorType":"IS_NULL"}]}`, true},
		{`{"type":"simple","jsonPath":"$.a","operatorType":"NOT_EQUALS","value":1}`, true},
		{`{"type":"simple","jsonPath":"$.a","operatorType":"ALMOST","value":1}`, false},
		{`{"type":"group","operator":"and","conditions":[]}`, false},
		{`{"type":"simple","jsonPath":"$.a","operatorType":"MATCHES_PATTERN","value":"("}`, false},
		{`{"type":"lifecycle","field":"colour","operatorType":"EQUALS","value":"x"}`, false},
		{`{"type":"simple","jsonPath":"a","operatorType":"EQUALS","value":1}`, false},
		{`{"type":"nope"}`, false},
	} {
		err := p.CheckCondition(json.RawMessage(tc.cond))
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.cond, err, tc.ok)
		}
	}
}

// TestEngineWithPredicateCriteria runs the engine on the real condition
// language: selection by workflow criterion, an automated cascade guarded
// by a numeric criterion, and an unknown operator in a stored workflow
// (imported without the checker) failing as WORKFLOW_FAILED.
func TestEngineWithPredicateCriteria(t *testing.T) {
	ctx := context.Background()
	e := &Engine{Criteria: NewPredicateCriteria(0)}
	set := setOf(t,
		wf("old", "A", `{"A":{}}`, `"criterion":{"type":"simple","jsonPath":"$.year","operatorType":"LESS_THAN","value":2000}`),
		wf("new", "A", `{"A":{"transitions":[
		  {"name":"big","next":"BIG","manual":false,"criterion":{"type":"simple","jsonPath":"$.amount","operatorType":"GREATER_OR_EQUAL","value":"100"}},
		  {"name":"small","next":"SMALL","manual":false}]},"BIG":{},"SMALL":{}}`))
	for _, tc := range []struct{ data, workflow, state string }{
		{`{"year":1990,"amount":500}`, "old", "A"},
		{`{"year":2024,"amount":500}`, "new", "BIG"},
		{`{"year":2024,"amount":99.5}`, "new", "SMALL"},
		{`{"amount":100}`, "new", "BIG"},
	} {
		out, err := e.Create(ctx, set, newRun(tc.data))
		if err != nil || out.Workflow != tc.workflow || out.State != tc.state {
			t.Errorf("%s: workflow %s state %s err %v; want %s %s", tc.data, out.Workflow, out.State, err, tc.workflow, tc.state)
		}
	}
	bad := setOf(t, wf("w", "A", `{"A":{"transitions":[{"name":"t","next":"B","manual":false,"criterion":{"type":"simple","jsonPath":"$.a","operatorType":"ALMOST","value":1}}]},"B":{}}`))
	_, err := e.Create(ctx, bad, newRun(`{"a":1}`))
	wantCode(t, err, apierr.WorkflowFailed.String(), "failed to evaluate transition criterion: invalid criterion")
}

// BenchmarkPredicateCriteriaEval is one transition criterion evaluation as
// the engine does it on every create: a cached compiled condition.
func BenchmarkPredicateCriteriaEval(b *testing.B) {
	p := NewPredicateCriteria(0)
	cond := json.RawMessage(`{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.year","operatorType":"GREATER_THAN","value":2000},{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"A"}]}`)
	data := []byte(`{"year":2024,"name":"abc","amount":120.5}`)
	meta := Meta{ID: "e1", State: "A"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := p.Eval(ctx, cond, data, meta, nil); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCreateThreeStatePredicate is BenchmarkCreateThreeStateAutomatic
// with the real condition language instead of the test double.
func BenchmarkCreateThreeStatePredicate(b *testing.B) {
	set := setOf(b, wf("bench", "NEW", `{
	  "NEW":{"transitions":[{"name":"check","next":"CHECKED","manual":false,"criterion":`+eq("ok", "true")+`}]},
	  "CHECKED":{"transitions":[{"name":"finish","next":"DONE","manual":false}]},
	  "DONE":{}}`))
	e := &Engine{Criteria: NewPredicateCriteria(0)}
	ctx := context.Background()
	data := []byte(`{"ok":true,"name":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		r := &Run{Tenant: "t", Entity: &Entity{Meta: Meta{ID: "e"}, Data: data}, TransactionID: "tx"}
		out, err := e.Create(ctx, set, r)
		if err != nil || out.State != "DONE" {
			b.Fatal(err, out.State)
		}
	}
}
