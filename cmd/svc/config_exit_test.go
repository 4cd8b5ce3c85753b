package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigErrorsExit1 runs the real binary with bad configurations: each
// must refuse to start with exit code 1 and exactly one line on stderr
// naming the variable (docs/decisions/0002-configuration.md), with no stack trace and nothing
// on stdout.
func TestConfigErrorsExit1(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := svcBinary(t) // the package's one build, not a second one

	const hmac = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	cases := []struct {
		name  string
		env   []string
		files map[string]string // relative to the working dir; "~/" is HOME
		want  string            // the variable the line must name
	}{
		{name: "unknown iam mode", env: []string{"SVC_IAM_MODE=bogus"}, want: "SVC_IAM_MODE"},
		{name: "int not a number", env: []string{"SVC_HTTP_PORT=abc"}, want: "SVC_HTTP_PORT"},
		{name: "int with a fraction", env: []string{"SVC_SEARCH_ASYNC_WORKERS=1.5"}, want: "SVC_SEARCH_ASYNC_WORKERS"},
		{name: "int overflow", env: []string{"SVC_GRPC_PORT=99999999999"}, want: "SVC_GRPC_PORT"},
		{name: "port out of range", env: []string{"SVC_ADMIN_PORT=70000"}, want: "SVC_ADMIN_PORT"},
		{name: "bad bool", env: []string{"SVC_REQUIRE_JWT=yes please"}, want: "SVC_REQUIRE_JWT"},
		{name: "bad duration", env: []string{"SVC_SEARCH_JOB_STALE_AFTER=5 minutes"}, want: "SVC_SEARCH_JOB_STALE_AFTER"},
		{name: "negative duration", env: []string{"SVC_HTTP_READ_TIMEOUT=-1s"}, want: "SVC_HTTP_READ_TIMEOUT"},
		{name: "unreadable _FILE", env: []string{"SVC_JWT_SIGNING_KEY_FILE=/nonexistent"}, want: "SVC_JWT_SIGNING_KEY_FILE"},
		{name: "jwt mode without a key", env: []string{"SVC_IAM_MODE=jwt"}, want: "SVC_JWT_SIGNING_KEY"},
		{name: "require jwt in mock mode", env: []string{"SVC_REQUIRE_JWT=true"}, want: "SVC_REQUIRE_JWT"},
		{name: "stale below 4x heartbeat", env: []string{"SVC_SEARCH_JOB_STALE_AFTER=30s"}, want: "SVC_SEARCH_JOB_STALE_AFTER"},
		{name: "clustering on memory", env: []string{"SVC_CLUSTER_ENABLED=true", "SVC_NODE_ID=n1", "SVC_HMAC_SECRET=" + hmac}, want: "SVC_CLUSTER_ENABLED"},
		{name: "clustering on sqlite", env: []string{"SVC_CLUSTER_ENABLED=true", "SVC_NODE_ID=n1", "SVC_HMAC_SECRET=" + hmac, "SVC_STORAGE_BACKEND=sqlite"}, want: "SVC_CLUSTER_ENABLED"},
		{name: "sqlite cache size", env: []string{"SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_CACHE_SIZE=0"}, want: "SVC_SQLITE_CACHE_SIZE"},
		{name: "postgres without url", env: []string{"SVC_STORAGE_BACKEND=postgres"}, want: "SVC_POSTGRES_URL"},
		{name: "cors origin with a path", env: []string{"SVC_CORS_ALLOWED_ORIGINS=https://a.example/"}, want: "SVC_CORS_ALLOWED_ORIGINS"},
		{name: "invalid profile name", env: []string{"SVC_PROFILES=../etc"}, want: "SVC_PROFILES"},
		{name: "metrics auth without bearer", env: []string{"SVC_METRICS_REQUIRE_AUTH=true"}, want: "SVC_METRICS_BEARER"},
		{name: "bad value in .env", files: map[string]string{".env": "SVC_HTTP_PORT=abc\n"}, want: "SVC_HTTP_PORT"},
		{name: "bad value in a profile file", env: []string{"SVC_PROFILES=dev"}, files: map[string]string{".env.dev": "SVC_IAM_MODE=oauth\n"}, want: "SVC_IAM_MODE"},
		{name: "bad value in the user file", files: map[string]string{"~/.config/svc/svc.env": "SVC_SEARCH_JOB_MAX_ATTEMPTS=0\n"}, want: "SVC_SEARCH_JOB_MAX_ATTEMPTS"},
		{name: "unparsable .env", files: map[string]string{".env": "SVC_JWT_ISSUER=\"unterminated\nSVC_HTTP_PORT=1\n"}, want: ".env"},
		{name: "short hmac from _FILE", env: []string{"SVC_CLUSTER_ENABLED=true", "SVC_NODE_ID=n1", "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL=postgres://db/svc", "SVC_HMAC_SECRET_FILE=hmac"}, files: map[string]string{"hmac": "abcd\r\n"}, want: "SVC_HMAC_SECRET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case runs its own process in its own directories
			home, work := t.TempDir(), t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(work, name)
				if rest, ok := strings.CutPrefix(name, "~/"); ok {
					p = filepath.Join(home, rest)
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin)
			cmd.Dir = work
			cmd.Env = append([]string{"HOME=" + home, "SVC_SUPPRESS_BANNER=true"}, tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("svc did not exit: it started despite the bad configuration\nstderr: %s", stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("want exit code 1, got %v\nstderr: %s", err, stderr.String())
			}
			line := stderr.String()
			if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
				t.Fatalf("stderr must be exactly one line, got %q", line)
			}
			if !strings.Contains(line, tc.want+": ") {
				t.Fatalf("stderr must name %s, got %q", tc.want, line)
			}
			if strings.Contains(line, "goroutine") || strings.Contains(line, "panic") {
				t.Fatalf("stack trace on stderr: %q", line)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout must be empty, got %q", stdout.String())
			}
		})
	}
}
