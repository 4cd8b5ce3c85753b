package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSQLiteSvc runs the binary on the SQLite file path and returns the
// process and the API base URL.
func startSQLiteSvc(t *testing.T, bin, path string, env ...string) (*syncBuffer, string, func()) {
	t.Helper()
	httpPort, adminPort := freePort(t), freePort(t)
	env = append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH=" + path,
		"SVC_SUPPRESS_BANNER=true", "SVC_LOG_LEVEL=error"}, env...)
	cmd, stderr := launchServe(t, bin, env...)
	waitReady(t, adminPort)
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	return stderr, fmt.Sprintf("http://127.0.0.1:%d/api", httpPort), stop
}

// TestSQLiteSurvivesRestart: SVC_STORAGE_BACKEND=sqlite with SVC_SQLITE_PATH
// keeps models and entities (with their history) in that file across a
// restart of the real binary; a second svc on the same file refuses to
// start with one line naming it, while the first keeps serving.
func TestSQLiteSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := svcBinary(t)
	path := filepath.Join(t.TempDir(), "data", "svc.db")
	_, base, stop := startSQLiteSvc(t, bin, path)
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/keep/1", `{"n":1,"s":"x"}`},
		{"PUT", "/model/keep/1/lock", ""},
	} {
		if code, b := apiCall(t, base, step.method, step.path, step.body); code != 200 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, code, b)
		}
	}
	code, b := apiCall(t, base, "POST", "/entity/JSON/keep/1", `{"n":7,"s":"kept"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, b)
	}
	id := between(b, `"entityIds":["`, `"`)
	if code, b := apiCall(t, base, "PUT", "/entity/JSON/"+id, `{"n":8,"s":"kept"}`); code != 200 {
		t.Fatalf("update: %d %s", code, b)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database file is not where SVC_SQLITE_PATH says: %v", err)
	}

	// A second svc on the same file: exit 1, one line naming the file.
	cmd, out := launchServe(t, bin, fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)), fmt.Sprintf("SVC_ADMIN_PORT=%d", freePort(t)),
		fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)), "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+path, "SVC_SUPPRESS_BANNER=true")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a second svc on the same file did not exit")
	}
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("second svc exit code %d, want 1", cmd.ProcessState.ExitCode())
	}
	line := out.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, path) || !strings.Contains(line, "in use by another svc") {
		t.Errorf("second svc must say in one line that the file is in use: %q", line)
	}
	if code, _ := apiCall(t, base, "GET", "/entity/"+id, ""); code != 200 {
		t.Errorf("the first svc stopped serving after the refused second one: %d", code)
	}

	stop()
	_, base, stop = startSQLiteSvc(t, bin, path)
	defer stop()
	code, b = apiCall(t, base, "GET", "/entity/"+id, "")
	if code != 200 || !strings.Contains(b, `"n":8`) {
		t.Fatalf("entity after restart: %d %s", code, b)
	}
	code, b = apiCall(t, base, "GET", "/entity/"+id+"/changes", "")
	if code != 200 || strings.Count(b, `"changeType"`) != 2 {
		t.Fatalf("history after restart: %d %s", code, b)
	}
	if code, b := apiCall(t, base, "GET", "/model/", ""); code != 200 || !strings.Contains(b, `"keep"`) {
		t.Fatalf("models after restart: %d %s", code, b)
	}
}

// between is the text of s after the first open and before the next close.
func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, close)
	return v
}

// TestInitSelectsSQLite: `svc init` writes SVC_STORAGE_BACKEND=sqlite into
// the user file it creates, naming the default file; svc then keeps its
// data in ~/.local/share/svc/svc.db and its banner says so. Without a
// config file svc still starts on memory, and its banner says that too.
func TestInitSelectsSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := svcBinary(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	bare := func(extra ...string) *syncBuffer {
		adminPort := freePort(t)
		cmd := exec.Command(bin)
		cmd.Dir = t.TempDir()
		cmd.Env = append(append([]string{}, env...), append([]string{fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)),
			fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t))}, extra...)...)
		out := &syncBuffer{}
		cmd.Stderr = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		waitReady(t, adminPort)
		return out
	}
	if out := bare(); !out.waitFor("storage memory", "data: in memory only") {
		t.Errorf("bare svc banner:\n%s", out.String())
	}

	in := exec.Command(bin, "init")
	in.Env = env
	out, err := in.CombinedOutput()
	dbFile := filepath.Join(home, ".local", "share", "svc", "svc.db")
	if err != nil || !strings.Contains(string(out), dbFile) {
		t.Fatalf("init: %v %s", err, out)
	}
	written, err := os.ReadFile(filepath.Join(home, ".config", "svc", "svc.env"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(written), "\nSVC_STORAGE_BACKEND=sqlite\n") || !strings.Contains(string(written), "# SVC_SQLITE_PATH="+dbFile+"\n") {
		t.Fatalf("init file does not select sqlite:\n%s", written)
	}
	banner := bare()
	if !banner.waitFor("storage sqlite", "data: "+dbFile) {
		t.Errorf("banner after init does not say where the data lives:\n%s", banner.String())
	}
	if _, err := os.Stat(dbFile); err != nil {
		t.Errorf("no database in the data directory after init: %v", err)
	}
}
