package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/internal/testkeys"
	"svc/storage/pgtest"
)

// scratchDatabase creates a uniquely named database and drops it after t.
func scratchDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.New(t, "jwt")
}

type jwtProc struct {
	cmd            *exec.Cmd
	base           string
	stderr, stdout *syncBuffer
}

func startJWTProc(t *testing.T, env []string) *jwtProc {
	t.Helper()
	httpPort, adminPort := freePort(t), freePort(t)
	cmd := exec.Command(svcBinary(t), "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(t, env...), fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)))
	p := &jwtProc{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d/api", httpPort), stderr: &syncBuffer{}, stdout: &syncBuffer{}}
	cmd.Stderr, cmd.Stdout = p.stderr, p.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("svc stderr:\n%s\nsvc stdout:\n%s", p.stderr.String(), p.stdout.String())
		}
	})
	waitReady(t, adminPort)
	return p
}

func (p *jwtProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("svc did not stop")
	}
}

func call(t *testing.T, method, u, auth, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if strings.HasSuffix(u, "/oauth/token") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

func tokenFor(t *testing.T, base, id, secret string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	tok, _ := m["access_token"].(string)
	if resp.StatusCode != 200 || tok == "" {
		t.Fatalf("token for %s: %d %v", id, resp.StatusCode, m)
	}
	return tok
}

// TestJWTModeSurvivesRestartOnPostgres: clients and keypairs created through
// the API are still there after the process restarts on the same database,
// and a token signed before the restart still verifies after it.
func TestJWTModeSurvivesRestartOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := scratchDatabase(t)
	keyFile := testkeys.File(t, 5)
	env := []string{"SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile, "SVC_BOOTSTRAP_CLIENT_ID=boot",
		"SVC_BOOTSTRAP_CLIENT_SECRET=boot-secret", "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL=" + dbURL,
		"SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS=20"}

	p := startJWTProc(t, env)
	if !p.stderr.waitFor("WARNING: signing keypair") {
		t.Errorf("banner lacks the expiry warning for a 20-day key:\n%s", p.stderr.String())
	}
	admin := "Bearer " + tokenFor(t, p.base, "boot", "boot-secret")
	st, kp := call(t, "POST", p.base+"/oauth/keys/keypair", admin, `{"audience":"client"}`)
	if st != 200 {
		t.Fatalf("issue keypair: %d %v", st, kp)
	}
	st, cl := call(t, "POST", p.base+"/clients", admin, "")
	if st != 200 {
		t.Fatalf("create client: %d %v", st, cl)
	}
	id, secret := cl["client_id"].(string), cl["client_secret"].(string)
	before := "Bearer " + tokenFor(t, p.base, id, secret) // signed by the runtime keypair
	p.stop(t)

	q := startJWTProc(t, env)
	if st, _ := call(t, "GET", q.base+"/clients", before, ""); st != 403 {
		t.Fatalf("pre-restart token after restart: %d (want 403: valid token, no admin role)", st)
	}
	after := tokenFor(t, q.base, id, secret)
	parts := strings.Split(after, ".")
	hdr, _ := base64Decode(parts[0])
	if !strings.Contains(string(hdr), kp["keyId"].(string)) {
		t.Fatalf("after restart the runtime keypair should still sign: %s", hdr)
	}
	if st, cur := call(t, "GET", q.base+"/oauth/keys/keypair/current", admin, ""); st != 200 || cur["keyId"] != kp["keyId"] {
		t.Fatalf("current after restart: %d %v", st, cur)
	}
}

func base64Decode(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(s)
}

// A signing key that does not parse refuses startup with one line naming
// the variable and never quoting the value.
func TestBadSigningKeyRefusesStart(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(svcBinary(t), "serve")
	cmd.Dir = t.TempDir()
	secret := "c2VjcmV0LXZhbHVlLXRoYXQtaXMtbm90LWEta2V5"
	cmd.Env = cleanEnv(t, "SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY="+secret, fmt.Sprintf("SVC_HTTP_PORT=%d", freePort(t)),
		fmt.Sprintf("SVC_ADMIN_PORT=%d", freePort(t)), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)))
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SVC_JWT_SIGNING_KEY") || strings.Contains(string(out), secret) ||
		strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Fatalf("output: %q", out)
	}
}
