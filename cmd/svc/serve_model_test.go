package main

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestServeWiresModelAPI: the real binary serves the model API (not 501).
func TestServeWiresModelAPI(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	httpPort, adminPort := freePort(t), freePort(t)
	srv := startModelTestSvc(bin, t, fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_SUPPRESS_BANNER=true")
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)
	base := fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)
	resp, err := http.Post(base+"/model/import/JSON/SAMPLE_DATA/m0/1", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `"62856a12-3ed6-55ba-a7d4-aa98acd2b4df"` {
		t.Fatalf("import: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/model/export/SIMPLE_VIEW/m0/1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"currentState":"UNLOCKED","model":{"$":{".a":"INTEGER"}}}` {
		t.Fatalf("export: %d %s", resp.StatusCode, body)
	}
}

func startModelTestSvc(bin string, t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(bin)
	c.Dir = t.TempDir()
	c.Env = cleanEnv(t, env...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}
