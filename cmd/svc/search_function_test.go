package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buger/jsonparser"

	"svc/compute/member"
)

// TestServeSearchFunctionCondition: the real binary answers a direct search
// with a function condition through a compute member joined on
// SVC_GRPC_PORT (mock IAM mode: the member is the mock principal's
// tenant), and a grouped statistics query with the same condition.
func TestServeSearchFunctionCondition(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort, grpcPort := freePort(t), freePort(t), freePort(t)
	srv := startModelTestSvc(bin, t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", grpcPort), "SVC_SUPPRESS_BANNER=true")
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	fn := `{"type":"function","function":{"name":"small","config":{"calculationNodesTags":"calc"}}}`
	// No member yet: 503, retryable.
	if code, body := post("/model/import/JSON/SAMPLE_DATA/f/1", `{"n":1}`); code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	req, _ := http.NewRequest("PUT", base+"/model/f/1/lock", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("lock: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	for n := 0; n < 5; n++ {
		if code, body := post("/entity/JSON/f/1", fmt.Sprintf(`{"n":%d}`, n)); code != 200 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	if code, body := post("/search/direct/f/1", fn); code != 503 || !strings.Contains(body, "NO_COMPUTE_MEMBER_FOR_TAG") {
		t.Fatalf("without a member: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := member.Connect(ctx, member.Config{Endpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort), Tags: []string{"calc"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{Criteria: func(_ context.Context, c *member.Call) (bool, string, error) {
		n, err := jsonparser.GetInt(c.Request.Payload.Data, "n")
		return n < 2, "", err
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	code, body := post("/search/direct/f/1?sort=n", fn)
	if code != 200 || strings.Count(body, "\n") != 2 || !strings.Contains(body, `{"n":0}`) || !strings.Contains(body, `{"n":1}`) {
		t.Fatalf("search: %d %s", code, body)
	}
	code, body = post("/entity/stats/f/1/query", `{"groupBy":["state"],"condition":`+fn+`}`)
	if code != 200 || !strings.Contains(body, `"count":2`) {
		t.Fatalf("grouped stats: %d %s", code, body)
	}
}
