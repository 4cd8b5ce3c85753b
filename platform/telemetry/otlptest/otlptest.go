// Package otlptest is an in-process OTLP/gRPC collector for tests: it
// records the spans and metric names svc exports.
package otlptest

import (
	"context"
	"net"
	"sync"
	"testing"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Collector receives OTLP traces and metrics over gRPC on loopback.
type Collector struct {
	colltrace.UnimplementedTraceServiceServer

	// Endpoint is http://127.0.0.1:port, for OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
}

// Start serves a collector until the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{Endpoint: "http://" + ln.Addr().String(), metrics: map[string]bool{}}
	srv := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(srv, c)
	collmetrics.RegisterMetricsServiceServer(srv, metricsService{c: c})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return c
}

// Env points the OTLP exporters of the test process at c (plaintext).
func (c *Collector) Env(t testing.TB) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.Endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
}

func (c *Collector) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	return &colltrace.ExportTraceServiceResponse{}, nil
}

// metricsService adapts the metrics Export, whose method name collides
// with the trace service's.
type metricsService struct {
	collmetrics.UnimplementedMetricsServiceServer
	c *Collector
}

func (m metricsService) Export(_ context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	m.c.mu.Lock()
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				m.c.metrics[mt.GetName()] = true
			}
		}
	}
	m.c.mu.Unlock()
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// Spans returns a copy of every span received so far.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// Metrics returns the names of every metric received so far.
func (c *Collector) Metrics() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for k := range c.metrics {
		out[k] = true
	}
	return out
}

// SpanNamed returns the first received span called name, or nil.
func (c *Collector) SpanNamed(name string) *tracepb.Span {
	for _, s := range c.Spans() {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}
