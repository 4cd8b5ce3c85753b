package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/compute/member"
	"svc/internal/await"
)

// TestServeComputeMemberJoins starts the real binary in mock IAM mode and
// connects svc's own compute-member client over loopback gRPC on
// SVC_GRPC_PORT: the member is greeted with an id. On SIGTERM the process
// drains, ends the member's stream and exits 0.
func TestServeComputeMemberJoins(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = cleanEnv(t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true")
	var stderr, stdout syncBuffer
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitReady(t, adminPort)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := member.Connect(ctx, member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Tags: []string{"calc"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{})
	if err != nil {
		t.Fatalf("member join: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	defer m.Close()
	if m.ID() == "" {
		t.Fatal("greet carried no member id")
	}
	if !stdout.waitFor("compute gRPC listening") {
		t.Errorf("no gRPC listening log line:\n%s", stdout.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("member stream still open after SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestServeRefusesABusyGRPCPort: a taken SVC_GRPC_PORT is a startup error
// naming the variable, exit code 1.
func TestServeRefusesABusyGRPCPort(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	busy, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = cleanEnv(t, fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)), fmt.Sprintf("SVC_ADMIN_PORT=%d", freePort(t)),
		fmt.Sprintf("SVC_GRPC_PORT=%d", busy.Addr().(*net.TCPAddr).Port), "SVC_SUPPRESS_BANNER=true")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve with a busy gRPC port: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "SVC_GRPC_PORT") {
		t.Fatalf("stderr does not name SVC_GRPC_PORT: %q", stderr.String())
	}
}

// TestServeWorkflowProcessorOverGRPC drives the wiring end to end on the
// real binary: a model with an imported workflow whose automated
// transition runs a SYNC processor; without a member the create is 503
// NO_COMPUTE_MEMBER_FOR_TAG, with svc's member client joined over gRPC the
// processor's data is stored and the entity reaches the next state.
func TestServeWorkflowProcessorOverGRPC(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	srv := startModelTestSvc(bin, t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error")
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	call := func(method, path, body string) (int, string) {
		t.Helper()
		return apiCall(t, base, method, path, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/order/1", `{"amount":1}`},
		{"PUT", "/model/order/1/lock", ""},
		{"POST", "/model/order/1/workflow/import", `{"workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
		  "NEW":{"transitions":[{"name":"process","next":"DONE","manual":false,
		    "processors":[{"name":"enrich","executionMode":"SYNC","config":{"calculationNodesTags":"calc","responseTimeoutMs":5000}}]}]},
		  "DONE":{}}}]}`},
	} {
		if code, body := call(c.method, c.path, c.body); code != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
	if code, body := call("POST", "/entity/JSON/order/1", `{"amount":1}`); code != 503 || !strings.Contains(body, "NO_COMPUTE_MEMBER_FOR_TAG") {
		t.Fatalf("create without a member: %d %s", code, body)
	}

	seen := make(chan string, 1)
	m, err := member.Connect(context.Background(), member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Tags: []string{"calc"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{
		Processor: func(_ context.Context, c *member.Call) (json.RawMessage, error) {
			if c.Request.ProcessorName != "enrich" || c.AuthType == "" || c.Request.EntityID == "" || c.Request.TransactionID == "" {
				return nil, fmt.Errorf("unexpected call %s by %q for entity %q in transaction %q",
					c.Request.ProcessorName, c.AuthType, c.Request.EntityID, c.Request.TransactionID)
			}
			seen <- c.Request.EntityID + " " + c.Request.TransactionID
			return json.RawMessage(`{"amount":2}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	code, body := call("POST", "/entity/JSON/order/1", `{"amount":1}`)
	if code != 200 {
		t.Fatalf("create with a member: %d %s", code, body)
	}
	var created []struct {
		TransactionID string   `json:"transactionId"`
		EntityIDs     []string `json:"entityIds"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || len(created) != 1 || len(created[0].EntityIDs) != 1 {
		t.Fatalf("create response %s (%v)", body, err)
	}
	// The member was asked about this entity in this transaction.
	if got, want := <-seen, created[0].EntityIDs[0]+" "+created[0].TransactionID; got != want {
		t.Fatalf("processor request for %q, want %q", got, want)
	}
	code, body = call("GET", "/entity/"+created[0].EntityIDs[0], "")
	var got struct {
		Data json.RawMessage `json:"data"`
		Meta struct {
			State string `json:"state"`
		} `json:"meta"`
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.Meta.State != "DONE" || string(got.Data) != `{"amount":2}` {
		t.Fatalf("entity after the processor: %d %s", code, body)
	}

	// One metrics pipeline (issue 24 item 7): the storage operations, the
	// dispatches (the refused one too) and the member's gRPC stream, once
	// it ends, are latency histograms on /metrics.
	m.Close()
	want := []string{
		`svc_storage_operation_duration_seconds_count{engine="memory",op="Commit",outcome="ok"}`,
		`svc_storage_operation_duration_seconds_count{engine="memory",op="Get",outcome="ok"}`,
		`svc_compute_dispatch_duration_seconds_count{kind="processor",outcome="ok"} 1`,
		`svc_compute_dispatch_duration_seconds_count{kind="processor",outcome="error"} 1`,
		`grpc_server_handling_seconds_count{method="/org.cyoda.cloud.api.grpc.CloudEventsService/startStreaming",code=`,
	}
	var metricsText string
	if !await.Poll(60*time.Second, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", adminPort))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		metricsText = string(b)
		for _, w := range want {
			if !strings.Contains(metricsText, w) {
				return false
			}
		}
		return true
	}) {
		for _, w := range want {
			if !strings.Contains(metricsText, w) {
				t.Errorf("/metrics lacks %s", w)
			}
		}
	}
}
