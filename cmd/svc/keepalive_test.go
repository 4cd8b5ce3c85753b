package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"svc/compute/member"
	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// TestServeKeepAliveVariables: the real binary honours
// SVC_KEEPALIVE_INTERVAL and SVC_KEEPALIVE_TIMEOUT (docs/decisions/0019-compute-members.md; the compatible
// system parses and ignores them). With 1 s and 2 s a silent member is pinged, then
// evicted with DeadlineExceeded between the timeout and timeout+interval,
// and a processor routed to its tag answers 503 NO_COMPUTE_MEMBER_FOR_TAG;
// a member that acks stays connected and keeps serving.
func TestServeKeepAliveVariables(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	srv := startModelTestSvc(bin, t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error",
		"SVC_KEEPALIVE_INTERVAL=1", "SVC_KEEPALIVE_TIMEOUT=2")
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	call := func(method, path, body string) (int, string) {
		t.Helper()
		return apiCall(t, base, method, path, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/ka/1", `{"n":1}`},
		{"PUT", "/model/ka/1/lock", ""},
		{"POST", "/model/ka/1/workflow/import", `{"workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{
		  "NEW":{"transitions":[
		    {"name":"quiet","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"quiet"}}]},
		    {"name":"lively","next":"DONE","manual":true,"processors":[{"name":"p","config":{"calculationNodesTags":"lively"}}]}]},
		  "DONE":{}}}]}`},
	} {
		if code, body := call(c.method, c.path, c.body); code != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
	lively, err := member.Connect(context.Background(), member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Tags: []string{"lively"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{Processor: func(context.Context, *member.Call) (json.RawMessage, error) {
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer lively.Close()

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := cloudapi.NewCloudEventsServiceClient(conn).StartStreaming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&ce.CloudEvent{Id: "j", Source: "test", SpecVersion: "1.0", Type: wire.TypeJoin,
		Data: &ce.CloudEvent_TextData{TextData: `{"id":"q","tags":["quiet"]}`}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	kas := 0
	var end error
	for {
		ev, err := st.Recv()
		if err != nil {
			end = err
			break
		}
		if ev.GetType() == wire.TypeKeepAlive {
			kas++
		}
	}
	elapsed := time.Since(start)
	if s, _ := status.FromError(end); s.Code() != codes.DeadlineExceeded {
		t.Fatalf("silent member ended with %v", end)
	}
	// Upper bound generous for a loaded machine; the lower bound is exact.
	if elapsed < 2*time.Second || elapsed > 30*time.Second || kas < 1 {
		t.Fatalf("evicted after %v with %d keep-alives (interval 1 s, timeout 2 s)", elapsed, kas)
	}

	code, body := call("POST", "/entity/JSON/ka/1", `{"n":1}`)
	var created []struct {
		EntityIDs []string `json:"entityIds"`
	}
	if err := json.Unmarshal([]byte(body), &created); code != 200 || err != nil || len(created) != 1 {
		t.Fatalf("create: %d %s", code, body)
	}
	id := created[0].EntityIDs[0]
	if code, body := call("PUT", "/entity/JSON/"+id+"/quiet", `{"n":1}`); code != 503 || !strings.Contains(body, "NO_COMPUTE_MEMBER_FOR_TAG") {
		t.Fatalf("dispatch to the evicted member's tag: %d %s", code, body)
	}
	select {
	case <-lively.Done():
		t.Fatalf("the acking member was evicted: %v", lively.Err())
	default:
	}
	if code, body := call("PUT", "/entity/JSON/"+id+"/lively", `{"n":1}`); code != 200 {
		t.Fatalf("dispatch to the acking member: %d %s", code, body)
	}
}
