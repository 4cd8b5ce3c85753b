package telemetry_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"svc/platform/telemetry"
	"svc/platform/telemetry/otlptest"
)

// TestSpansReachAnOTLPReceiver runs the real exporters against an
// in-process OTLP/gRPC collector: gRPC spans arrive, and no metric (the
// call's latency is on /metrics, platform/opmetrics). (Storage and dispatch spans: traced.TestSpansReachAnOTLPReceiver.)
func TestSpansReachAnOTLPReceiver(t *testing.T) {
	col := otlptest.Start(t)
	col.Env(t)
	ctx := context.Background()
	tel, err := telemetry.Start(ctx, "9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	// A gRPC call through the interceptors.
	opts := tel.GRPCServerOptions()
	if len(opts) != 2 {
		t.Fatalf("%d server options", len(opts))
	}
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
	if col.SpanNamed("/grpc.health.v1.Health/Check") == nil {
		t.Error("no gRPC span")
	}
	if m := col.Metrics(); len(m) != 0 {
		t.Errorf("metrics exported over OTLP: %v", m)
	}
}

// TestDisabledIsFree: a nil pipeline hands back what it was given.
func TestDisabledIsFree(t *testing.T) {
	var tel *telemetry.T
	if tel.GRPCServerOptions() != nil || tel.Shutdown(context.Background()) != nil {
		t.Fatal("disabled telemetry built something")
	}
}

func TestUnsupportedProtocolRefused(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := telemetry.Start(context.Background(), "x"); err == nil || err.Error() == "" {
		t.Fatal("http/json accepted")
	}
}
