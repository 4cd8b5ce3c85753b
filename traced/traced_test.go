package traced_test

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"svc/platform/telemetry"
	"svc/platform/telemetry/otlptest"
	"svc/storage"
	"svc/storage/memory"
	"svc/traced"
	"svc/workflow"
)

type fakeDispatcher struct{}

func (fakeDispatcher) DispatchProcessor(context.Context, *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
	return &workflow.ProcessorResult{}, nil
}
func (fakeDispatcher) DispatchCriteria(context.Context, *workflow.CriteriaCall) (*workflow.CriteriaResult, error) {
	return nil, errors.New("member gone")
}
func (fakeDispatcher) DispatchFunction(context.Context, *workflow.FunctionCall) (*workflow.FunctionResult, error) {
	return &workflow.FunctionResult{}, nil
}

// TestSpansReachAnOTLPReceiver runs the real exporters against an
// in-process OTLP/gRPC collector: storage and dispatch spans arrive,
// children of the span their context carries, with the duration metrics.
func TestSpansReachAnOTLPReceiver(t *testing.T) {
	col := otlptest.Start(t)
	col.Env(t)
	ctx := context.Background()
	tel, err := telemetry.Start(ctx, "9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	root, rootSpan := tel.StartSpan(ctx, "request")

	st := traced.Entities(tel, memory.NewEntities())
	if _, err := st.Get(root, "t1", [16]byte{1}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := st.Count(root, "t1", storage.ModelKey{Name: "m", Version: 1}); err != nil {
		t.Fatal(err)
	}
	d := traced.Dispatch(tel, fakeDispatcher{})
	_, _ = d.DispatchProcessor(root, &workflow.ProcessorCall{Processor: "enrich"})
	_, _ = d.DispatchCriteria(root, &workflow.CriteriaCall{Criteria: "check"})

	rootSpan.End()

	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := tel.Shutdown(sctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	req := col.SpanNamed("request")
	if req == nil {
		t.Fatalf("no request span among %d", len(col.Spans()))
	}
	for _, name := range []string{"storage.entities.Get", "storage.entities.Count", "compute.dispatch.processor", "compute.dispatch.criteria"} {
		sp := col.SpanNamed(name)
		if sp == nil {
			t.Errorf("no span %s", name)
			continue
		}
		if hex.EncodeToString(sp.GetTraceId()) != hex.EncodeToString(req.GetTraceId()) || hex.EncodeToString(sp.GetParentSpanId()) != hex.EncodeToString(req.GetSpanId()) {
			t.Errorf("%s is not a child of the request span", name)
		}
	}
	if sp := col.SpanNamed("compute.dispatch.criteria"); sp != nil && sp.GetStatus().GetMessage() != "member gone" {
		t.Errorf("failed dispatch status %v", sp.GetStatus())
	}
	m := col.Metrics()
	for _, name := range []string{"svc.storage.operation.duration", "svc.compute.dispatch.duration"} {
		if !m[name] {
			t.Errorf("no metric %s (got %v)", name, m)
		}
	}
}

// TestDisabledIsFree: a nil pipeline hands back what it was given.
func TestDisabledIsFree(t *testing.T) {
	var tel *telemetry.T
	st := memory.NewEntities()
	if traced.Entities(tel, st) != storage.Entities(st) {
		t.Fatal("disabled telemetry wrapped the store")
	}
	var d traced.Dispatcher = fakeDispatcher{}
	if traced.Dispatch(tel, d) != d {
		t.Fatal("disabled telemetry wrapped the dispatcher")
	}
}
