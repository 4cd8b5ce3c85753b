package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a fake process environment: a key present with "" is set but empty.
type env map[string]string

func (e env) getenv(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// with returns a copy of e with kv ("NAME", "value", ...) added.
func (e env) with(kv ...string) env {
	out := env{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// loadEnv loads with only a fake environment: the working directory is an
// empty temporary directory and there are no user or system files.
func loadEnv(t *testing.T, e env) (*Config, error) {
	t.Helper()
	return Load(Source{Getenv: e.getenv, WorkDir: t.TempDir()})
}

// wantVar asserts that err is a *Error naming name, or nil when name is "".
func wantVar(t *testing.T, err error, name string) {
	t.Helper()
	if name == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *config.Error naming %s, got %T %v", name, err, err)
	}
	if ce.Var != name {
		t.Fatalf("want error naming %s, got %s (%v)", name, ce.Var, err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, name+": ") || strings.ContainsAny(msg, "\r\n") {
		t.Fatalf("error text must be one line starting with %q, got %q", name+": ", msg)
	}
}

// mustLoad loads e and fails the test on an error.
func mustLoad(t *testing.T, e env) *Config {
	t.Helper()
	c, err := loadEnv(t, e)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// varByName finds a variable of the table bound to c.
func varByName(t *testing.T, c *Config, name string) Var {
	t.Helper()
	for _, v := range Vars(c) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no variable %s", name)
	return Var{}
}

// hmac64 is a valid SVC_HMAC_SECRET: 64 hex characters.
const hmac64 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// clusterEnv is a valid clustered configuration for the cluster rules.
var clusterEnv = env{
	"SVC_CLUSTER_ENABLED": "true",
	"SVC_NODE_ID":         "node-1",
	"SVC_HMAC_SECRET":     hmac64,
	"SVC_STORAGE_BACKEND": "postgres",
	"SVC_POSTGRES_URL":    "postgres://svc@db/svc",
}
