package workflow

import (
	"context"
	"log/slog"
	"testing"

	json "github.com/goccy/go-json"
)

// BenchmarkCreateThreeStateAutomatic runs a new entity through
// NEW -> CHECKED -> DONE, both automated, the first guarded by one
// criterion: the engine's share of an entity create.
func BenchmarkCreateThreeStateAutomatic(b *testing.B) {
	set := setOf(b, wf("bench", "NEW", `{
	  "NEW":{"transitions":[{"name":"check","next":"CHECKED","manual":false,"criterion":`+eq("ok", "true")+`}]},
	  "CHECKED":{"transitions":[{"name":"finish","next":"DONE","manual":false}]},
	  "DONE":{}}`))
	e := &Engine{Criteria: &fakeEvaluator{}}
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

// BenchmarkCreateDefaultWorkflow is the floor: a model without workflows.
func BenchmarkCreateDefaultWorkflow(b *testing.B) {
	set := setOf(b)
	// The substitution WARN goes to a discarding logger: the figure is the
	// engine, not stderr.
	e := &Engine{Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r := &Run{Tenant: "t", Entity: &Entity{Meta: Meta{ID: "e"}, Data: []byte(`{}`)}, TransactionID: "tx"}
		if _, err := e.Create(ctx, set, r); err != nil {
			b.Fatal(err)
		}
	}
}

// alwaysTrue is an evaluator that costs nothing, to isolate the engine.
type alwaysTrue struct{}

func (alwaysTrue) Eval(context.Context, json.RawMessage, []byte, Meta, FunctionCaller) (bool, error) {
	return true, nil
}

// BenchmarkCreateThreeStateEngineOnly is the same run with a free
// evaluator: the engine's own cost.
func BenchmarkCreateThreeStateEngineOnly(b *testing.B) {
	set := setOf(b, wf("bench", "NEW", `{
	  "NEW":{"transitions":[{"name":"check","next":"CHECKED","manual":false,"criterion":`+eq("ok", "true")+`}]},
	  "CHECKED":{"transitions":[{"name":"finish","next":"DONE","manual":false}]},
	  "DONE":{}}`))
	e := &Engine{Criteria: alwaysTrue{}}
	ctx := context.Background()
	r := &Run{Tenant: "t", Entity: &Entity{Meta: Meta{ID: "e"}, Data: []byte(`{"ok":true}`)}, TransactionID: "tx"}
	b.ReportAllocs()
	for b.Loop() {
		if out, err := e.Create(ctx, set, r); err != nil || out.State != "DONE" {
			b.Fatal(err)
		}
	}
}
