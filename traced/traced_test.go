package traced_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"svc/platform/opmetrics"
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
// children of the span their context carries, and no metric (they are on
// /metrics: TestLatencyOnMetrics).
func TestSpansReachAnOTLPReceiver(t *testing.T) {
	col := otlptest.Start(t)
	col.Env(t)
	ctx := context.Background()
	tel, err := telemetry.Start(ctx, "9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	root, rootSpan := tel.StartSpan(ctx, "request")

	st := traced.Entities(tel, nil, "memory", memory.NewEntities())
	if _, err := st.Get(root, "t1", [16]byte{1}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := st.Count(root, "t1", storage.ModelKey{Name: "m", Version: 1}); err != nil {
		t.Fatal(err)
	}
	d := traced.Dispatch(tel, nil, fakeDispatcher{})
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
	if m := col.Metrics(); len(m) != 0 {
		t.Errorf("metrics exported over OTLP: %v", m)
	}
}

// TestDisabledIsFree: without telemetry and metrics the decorators hand
// back what they were given.
func TestDisabledIsFree(t *testing.T) {
	var tel *telemetry.T
	st := memory.NewEntities()
	if traced.Entities(tel, nil, "memory", st) != storage.Entities(st) {
		t.Fatal("disabled telemetry wrapped the store")
	}
	var d traced.Dispatcher = fakeDispatcher{}
	if traced.Dispatch(tel, nil, d) != d {
		t.Fatal("disabled telemetry wrapped the dispatcher")
	}
}

// TestLatencyOnMetrics (issue 24 item 7): storage operations and
// dispatches are histograms in the /metrics set, by engine, operation or
// kind and outcome; an operation never called has no series.
func TestLatencyOnMetrics(t *testing.T) {
	set := metrics.NewSet()
	ops := opmetrics.New(set)
	ctx := context.Background()
	st := traced.Entities(nil, ops, "memory", memory.NewEntities())
	if _, err := st.Get(ctx, "t1", [16]byte{1}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := st.Count(ctx, "t1", storage.ModelKey{Name: "m", Version: 1}); err != nil {
		t.Fatal(err)
	}
	d := traced.Dispatch(nil, ops, fakeDispatcher{})
	_, _ = d.DispatchProcessor(ctx, &workflow.ProcessorCall{Processor: "enrich"})
	_, _ = d.DispatchCriteria(ctx, &workflow.CriteriaCall{Criteria: "check"})
	var b bytes.Buffer
	set.WritePrometheus(&b)
	out := b.String()
	for _, want := range []string{
		`svc_storage_operation_duration_seconds_count{engine="memory",op="Get",outcome="error"} 1`,
		`svc_storage_operation_duration_seconds_count{engine="memory",op="Count",outcome="ok"} 1`,
		`svc_compute_dispatch_duration_seconds_count{kind="processor",outcome="ok"} 1`,
		`svc_compute_dispatch_duration_seconds_count{kind="criteria",outcome="error"} 1`,
		`svc_storage_operation_duration_seconds_bucket{engine="memory",op="Get",outcome="error",le="0.0001"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics set lacks %s:\n%s", want, out)
		}
	}
	for _, absent := range []string{`op="Commit"`, `op="Get",outcome="ok"`, `kind="function"`, "t1"} {
		if strings.Contains(out, absent) {
			t.Errorf("/metrics set has %s, never sampled", absent)
		}
	}
}

// TestTimingAllocatesNothing: once a series exists, a timed storage read
// allocates what the bare store's read does (the hot-path rule).
func TestTimingAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	bare, id := seeded(t)
	timed := traced.Entities(nil, opmetrics.New(metrics.NewSet()), "memory", bare)
	ctx := context.Background()
	get := func(st storage.Entities) func() {
		return func() {
			if _, err := st.Get(ctx, "t1", id); err != nil {
				t.Fatal(err)
			}
		}
	}
	get(timed)()
	if b, w := testing.AllocsPerRun(200, get(bare)), testing.AllocsPerRun(200, get(timed)); w != b {
		t.Errorf("timed Get: %v allocations, the bare store's: %v", w, b)
	}
}

// seeded is a memory store holding one entity of tenant t1.
func seeded(tb testing.TB) (storage.Entities, [16]byte) {
	tb.Helper()
	st := memory.NewEntities()
	id := [16]byte{7}
	tx := &storage.Tx{Tenant: "t1", ID: [16]byte{8}, Writes: []storage.Write{{ID: id, Model: storage.ModelKey{Name: "m", Version: 1}, State: "NEW", Data: []byte(`{"a":1}`)}}}
	if _, err := st.Commit(context.Background(), tx); err != nil {
		tb.Fatal(err)
	}
	return st, id
}

// BenchmarkEntitiesGet is a storage read bare and timed for /metrics.
func BenchmarkEntitiesGet(b *testing.B) {
	bare, id := seeded(b)
	for _, c := range []struct {
		name string
		st   storage.Entities
	}{
		{"bare", bare},
		{"metrics", traced.Entities(nil, opmetrics.New(metrics.NewSet()), "memory", bare)},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.st.Get(ctx, "t1", id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
