package fast

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"svc/platform/config"
	"svc/platform/telemetry"
	"svc/platform/telemetry/otlptest"
)

// TestHTTPSpansReachAnOTLPReceiver: with telemetry on, each request is a
// server span named by method and route template that continues the
// caller's traceparent; no metric goes over OTLP (they are on /metrics). Not
// parallel: the collector's endpoint reaches telemetry through the
// environment (t.Setenv) and telemetry sets OpenTelemetry's global providers.
func TestHTTPSpansReachAnOTLPReceiver(t *testing.T) {
	col := otlptest.Start(t)
	col.Env(t)
	tel, err := telemetry.Start(context.Background(), "9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(config.Defaults(), Deps{Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := do(s, "GET", "/api/help/cli", "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if r.StatusCode() != 200 {
		t.Fatal(r.StatusCode())
	}
	do(s, "GET", "/api/entity/stats")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	sp := col.SpanNamed("GET /help/{topic}")
	if sp == nil {
		t.Fatalf("no help span among %d", len(col.Spans()))
	}
	if hex.EncodeToString(sp.GetTraceId()) != traceID || hex.EncodeToString(sp.GetParentSpanId()) != "00f067aa0ba902b7" {
		t.Fatalf("span does not continue the traceparent: %x %x", sp.GetTraceId(), sp.GetParentSpanId())
	}
	attrs := map[string]string{}
	for _, kv := range sp.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().String()
	}
	if attrs["http.route"] == "" || attrs["svc.request_id"] == "" || attrs["http.response.status_code"] == "" {
		t.Fatalf("span attributes %v", attrs)
	}
	if col.SpanNamed("GET /entity/stats") == nil {
		t.Fatal("no span for the second route")
	}
	if m := col.Metrics(); len(m) != 0 {
		t.Fatalf("metrics exported over OTLP: %v", m)
	}
}
