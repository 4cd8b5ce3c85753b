package opmetrics_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"svc/platform/opmetrics"
)

func scrape(set *metrics.Set) string {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	return b.String()
}

// TestGRPCLatency: each call through the interceptors is a sample of its
// method and status code.
func TestGRPCLatency(t *testing.T) {
	set := metrics.NewSet()
	srv := grpc.NewServer(opmetrics.New(set).GRPCServerOptions()...)
	hs := health.NewServer()
	hs.SetServingStatus("known", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := healthpb.NewHealthClient(conn)
	for range 2 {
		if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "known"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "unknown"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown service: %v", err)
	}
	out := scrape(set)
	for _, want := range []string{
		`grpc_server_handling_seconds_count{method="/grpc.health.v1.Health/Check",code="OK"} 2`,
		`grpc_server_handling_seconds_count{method="/grpc.health.v1.Health/Check",code="NotFound"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Watch") {
		t.Error("a method never called has series")
	}
}

// TestNilSetRecordsNothing: without a set nothing is built or recorded.
func TestNilSetRecordsNothing(t *testing.T) {
	var s *opmetrics.Set
	if s.GRPCServerOptions() != nil {
		t.Fatal("interceptors without a set")
	}
	s.Storage("memory", "Get").Since(time.Now(), nil)
	s.Dispatch("processor").Since(time.Now(), errors.New("x"))
}

// BenchmarkOpSince is one sample of an existing series.
func BenchmarkOpSince(b *testing.B) {
	op := opmetrics.New(metrics.NewSet()).Storage("memory", "Get")
	start := time.Now()
	op.Since(start, nil)
	b.ReportAllocs()
	for b.Loop() {
		op.Since(start, nil)
	}
}
