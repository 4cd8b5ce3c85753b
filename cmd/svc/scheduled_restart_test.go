package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"svc/internal/await"
	"svc/storage/pgtest"
)

func startScheduledSvc(t *testing.T, bin, dbURL string, httpPort, adminPort int, scheduler bool) *exec.Cmd {
	t.Helper()
	return startServe(t, bin, adminPort, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)),
		"SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+dbURL, "SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error",
		fmt.Sprintf("SVC_SCHEDULER_ENABLED=%v", scheduler), "SVC_SCHEDULER_SCAN_INTERVAL=50ms")
}

// TestScheduledTaskSurvivesRestart arms a scheduled transition on the real
// binary over PostgreSQL, stops it before the task is fired (its scheduler
// is off, so nothing can fire it), starts a new process on the same
// database and sees that one fire the task.
func TestScheduledTaskSurvivesRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := svcBinary(t)
	dbURL := pgtest.New(t, "schedrestart")
	httpPort, adminPort := freePort(t), freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader([]byte(body)))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	state := func(id string) string {
		t.Helper()
		code, b := call("GET", "/entity/"+id, "")
		var env struct {
			Meta struct {
				State string `json:"state"`
			} `json:"meta"`
		}
		if code != 200 || json.Unmarshal(b, &env) != nil {
			t.Fatalf("get: %d %s", code, b)
		}
		return env.Meta.State
	}

	first := startScheduledSvc(t, bin, dbURL, httpPort, adminPort, false)
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/timed/1", `{"n":1}`},
		{"PUT", "/model/timed/1/lock", ""},
		{"POST", "/model/timed/1/workflow/import", `{"workflows":[{"version":"1.3","name":"timer","initialState":"WAIT","states":{
		  "WAIT":{"transitions":[{"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":200}}]},"DONE":{}}}]}`},
	} {
		if code, b := call(step.method, step.path, step.body); code != 200 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, code, b)
		}
	}
	code, b := call("POST", "/entity/JSON/timed/1", `{"n":1}`)
	var res []struct {
		EntityIDs []string `json:"entityIds"`
	}
	if code != 200 || json.Unmarshal(b, &res) != nil || len(res) != 1 || len(res[0].EntityIDs) != 1 {
		t.Fatalf("create: %d %s", code, b)
	}
	id := res[0].EntityIDs[0]
	if s := state(id); s != "WAIT" {
		t.Fatalf("state before restart %s", s)
	}
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first process exit: %v", err)
	}

	startScheduledSvc(t, bin, dbURL, httpPort, adminPort, true)
	await.Until(t, 30*time.Second, func() bool { return state(id) == "DONE" }, "the armed task fires after the restart")
	code, b = call("GET", "/audit/entity/"+id, "")
	if code != 200 || !bytes.Contains(b, []byte("SCHEDULED_TRANSITION_FIRE")) || !bytes.Contains(b, []byte("SCHEDULED_TRANSITION_ARM")) {
		t.Fatalf("audit: %d %s", code, b)
	}
}
