package main

import (
	"fmt"
	"syscall"
	"testing"

	"svc/platform/telemetry/otlptest"
)

// TestServeExportsOTLPWhenEnabled runs the binary with the standard
// OTEL_EXPORTER_OTLP_* variables pointing at a local receiver: with
// SVC_OTEL_ENABLED=true the served request's span arrives (flushed at
// shutdown); without it, nothing is exported although the OTLP variables
// are set.
func TestServeExportsOTLPWhenEnabled(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	run := func(col *otlptest.Collector, env ...string) {
		t.Helper()
		httpPort, adminPort := freePort(t), freePort(t)
		cmd, stderr := launchServe(t, bin, append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
			fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true",
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.Endpoint, "OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, env...)...)
		waitReady(t, adminPort)
		if st, body := apiCall(t, fmt.Sprintf("http://127.0.0.1:%d/api", httpPort), "GET", "/help/cli", ""); st != 200 {
			t.Fatalf("help: %d %s", st, body)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	}
	on := otlptest.Start(t)
	run(on, "SVC_OTEL_ENABLED=true")
	if on.SpanNamed("GET /help/{topic}") == nil {
		t.Errorf("SVC_OTEL_ENABLED=true: no request span among %d", len(on.Spans()))
	}
	off := otlptest.Start(t)
	run(off)
	if n := len(off.Spans()); n != 0 || len(off.Metrics()) != 0 {
		t.Errorf("SVC_OTEL_ENABLED unset: %d spans, metrics %v exported", n, off.Metrics())
	}
}
