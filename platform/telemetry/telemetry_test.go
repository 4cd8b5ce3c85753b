package telemetry_test

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"svc/platform/telemetry"
	"svc/platform/telemetry/otlptest"
	"svc/storage"
	"svc/storage/memory"
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
// in-process OTLP/gRPC collector: storage, dispatch and gRPC spans arrive,
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

	st := tel.Entities(memory.NewEntities())
	if _, err := st.Get(root, "t1", [16]byte{1}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := st.Count(root, "t1", storage.ModelKey{Name: "m", Version: 1}); err != nil {
		t.Fatal(err)
	}
	d := tel.Dispatch(fakeDispatcher{})
	_, _ = d.DispatchProcessor(root, &workflow.ProcessorCall{Processor: "enrich"})
	_, _ = d.DispatchCriteria(root, &workflow.CriteriaCall{Criteria: "check"})

	// A gRPC call through the interceptors.
	opts := tel.GRPCServerOptions()
	if len(opts) != 2 {
		t.Fatalf("%d server options", len(opts))
	}
	rootSpan.End()
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
	defer ccancel()
	if _, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}

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
	if col.SpanNamed("/grpc.health.v1.Health/Check") == nil {
		t.Error("no gRPC span")
	}
	m := col.Metrics()
	for _, name := range []string{"svc.storage.operation.duration", "svc.compute.dispatch.duration", "rpc.server.duration"} {
		if !m[name] {
			t.Errorf("no metric %s (got %v)", name, m)
		}
	}
}

// TestDisabledIsFree: a nil pipeline hands back what it was given.
func TestDisabledIsFree(t *testing.T) {
	var tel *telemetry.T
	st := memory.NewEntities()
	if tel.Entities(st) != storage.Entities(st) {
		t.Fatal("disabled telemetry wrapped the store")
	}
	if tel.GRPCServerOptions() != nil || tel.Shutdown(context.Background()) != nil {
		t.Fatal("disabled telemetry built something")
	}
	var d telemetry.Dispatcher = fakeDispatcher{}
	if tel.Dispatch(d) != d {
		t.Fatal("disabled telemetry wrapped the dispatcher")
	}
}

func TestUnsupportedProtocolRefused(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := telemetry.Start(context.Background(), "x"); err == nil || err.Error() == "" {
		t.Fatal("http/json accepted")
	}
}
