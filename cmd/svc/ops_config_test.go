package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"svc/platform/config"
)

// TestCommandsShareServeConfiguration: health and migrate read the .env
// file serve reads, warn about a misspelt variable naming the closest
// setting, and migrate says which backend is selected when a PostgreSQL
// URL is set on the memory backend; the banner says where the listeners
// bind (loopback in mock mode).
func TestCommandsShareServeConfiguration(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	dir := t.TempDir()
	adminPort := freePort(t)
	dotenv := fmt.Sprintf("SVC_ADMIN_PORT=%d\nSVC_HTTP_PORT=%d\nSVC_GRPC_PORT=%d\nSVC_POSTGRES_URL=postgres://nobody@127.0.0.1:1/none\nSVC_LOG_LEVLE=debug\n",
		adminPort, freePort(t), freePort(t))
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}

	mg := exec.Command(bin, "migrate")
	mg.Dir, mg.Env = dir, cleanEnv(t)
	out, err := mg.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "storage backend is memory (SVC_STORAGE_BACKEND)") ||
		!strings.Contains(string(out), "SVC_POSTGRES_URL is set but unused") ||
		!strings.Contains(string(out), "SVC_LOG_LEVLE (in "+filepath.Join(dir, ".env")+") is not a setting and is ignored; did you mean SVC_LOG_LEVEL?") {
		t.Errorf("migrate: %v\n%s", err, out)
	}

	srv := exec.Command(bin)
	srv.Dir, srv.Env = dir, cleanEnv(t)
	var stderr syncBuffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitReady(t, adminPort)
	if !stderr.waitFor("listening on 127.0.0.1 (HTTP, SVC_HTTP_BIND_ADDRESS) and 127.0.0.1 (gRPC, SVC_GRPC_BIND_ADDRESS)", "did you mean SVC_LOG_LEVEL?") {
		t.Errorf("banner:\n%s", stderr.String())
	}

	// health finds the admin port in the same .env file.
	h := exec.Command(bin, "health")
	h.Dir, h.Env = dir, cleanEnv(t)
	if out, err := h.CombinedOutput(); err != nil || !strings.Contains(string(out), "ok") {
		t.Errorf("health with serve's .env: %v %s", err, out)
	}
}

// TestEveryCommandWarnsOfUnknownVariables (issue 26): version, init,
// import and export warn about a misspelt SVC_ variable as serve, health
// and migrate do, though they do not load the service configuration.
func TestEveryCommandWarnsOfUnknownVariables(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("SVC_LOG_LEVLE=debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const want = "did you mean SVC_LOG_LEVEL?"
	for _, args := range [][]string{
		{"version"},
		{"init"},
		// No svc listens there: the command fails after the warning.
		{"import", "--model", "m/1", "--url", "http://127.0.0.1:1/api", "--progress", "none", "-"},
		{"export", "--model", "m/1", "--url", "http://127.0.0.1:1/api", "--progress", "none"},
	} {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, cleanEnv(t, "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
		c.Stdin = strings.NewReader("")
		out, _ := c.CombinedOutput()
		if !strings.Contains(string(out), "SVC_LOG_LEVLE (in "+filepath.Join(dir, ".env")+") is not a setting and is ignored; "+want) {
			t.Errorf("svc %s: no warning:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestNewLoggerFormats: SVC_LOG_FORMAT picks slog's text or JSON lines.
func TestNewLoggerFormats(t *testing.T) {
	for format, prefix := range map[string]string{"text": "time=", "json": `{"time":`} {
		var b strings.Builder
		c := config.Defaults()
		c.LogFormat = format
		newLogger(c, &b).Info("hello", "k", "v")
		if !strings.HasPrefix(b.String(), prefix) || !strings.Contains(b.String(), "hello") {
			t.Errorf("%s: %q", format, b.String())
		}
	}
}

// TestBannerSaysOTelIsOn (issue 26): with SVC_OTEL_ENABLED the banner says
// traces are exported and where (metrics are on /metrics); without it,
// nothing.
func TestBannerSaysOTelIsOn(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, on := range []bool{true, false} {
		cfg := config.Defaults()
		cfg.OTelEnabled = on
		var b strings.Builder
		printBanner(&b, cfg, addr, addr)
		got := strings.Contains(b.String(), "OpenTelemetry on: traces over OTLP to http://collector:4317")
		if got != on {
			t.Errorf("SVC_OTEL_ENABLED=%v, banner:\n%s", on, b.String())
		}
	}
}

// TestIssuerWarning (issue 26): jwt mode with an issuer that is not an
// https URL (the default "svc") warns at start with what to set; an https
// issuer and mock mode say nothing.
func TestIssuerWarning(t *testing.T) {
	for _, tc := range []struct {
		mode, issuer string
		warn         bool
	}{{"jwt", "svc", true}, {"jwt", "http://svc.example.com/api", true}, {"jwt", "https://svc.example.com/api", false}, {"mock", "svc", false}} {
		cfg := config.Defaults()
		cfg.IAMMode, cfg.JWTIssuer = tc.mode, tc.issuer
		w := issuerWarning(cfg)
		if (w != "") != tc.warn || (tc.warn && !strings.Contains(w, "set SVC_JWT_ISSUER to the https URL")) {
			t.Errorf("%s %q: %q", tc.mode, tc.issuer, w)
		}
	}
}
