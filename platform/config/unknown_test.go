package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownVariablesWarn: a misspelt SVC_ variable in the environment or
// a file draws one warning naming where it is and the closest setting;
// settings, _FILE companions and the test suite's variables draw none.
func TestUnknownVariablesWarn(t *testing.T) {
	l := newLayers(t)
	if err := os.WriteFile(filepath.Join(l.work, ".env"), []byte("SVC_LOG_LEVLE=debug\nSVC_HTTP_PORT=8081\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"SVC_HTTP_PROT=9000", "SVC_JWT_SIGNING_KEY_FILE=", "SVC_TEST_POSTGRES_URL=x", "SVC_ZZZZZZZZZZZZZZZZZ=1", "PATH=/bin", "SVC_ACCESS_LOG=true"}
	src := l.source(env{})
	src.Environ = func() []string { return environ }
	c, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SVC_HTTP_PROT (in the environment) is not a setting and is ignored; did you mean SVC_HTTP_PORT?",
		"SVC_LOG_LEVLE (in " + filepath.Join(l.work, ".env") + ") is not a setting and is ignored; did you mean SVC_LOG_LEVEL?",
		"SVC_ZZZZZZZZZZZZZZZZZ (in the environment) is not a setting and is ignored",
	}
	if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if c.HTTPPort != 8081 || c.LogLevel != "info" {
		t.Fatalf("port %d level %s", c.HTTPPort, c.LogLevel)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"SVC_HTTP_PORT", "SVC_GRPC_PORT", "SVC_ADMIN_PORT"}
	for in, want := range map[string]string{"SVC_HTTP_PROT": "SVC_HTTP_PORT", "SVC_GRCP_PORT": "SVC_GRPC_PORT", "SVC_NOTHING_LIKE_IT": ""} {
		if got := closest(in, names); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestListenHosts: loopback by default in mock mode, every interface in
// jwt mode, an explicit address or * always wins.
func TestListenHosts(t *testing.T) {
	c := Defaults()
	if c.HTTPListenHost() != "127.0.0.1" || c.GRPCListenHost() != "127.0.0.1" {
		t.Fatalf("mock: %q %q", c.HTTPListenHost(), c.GRPCListenHost())
	}
	c.IAMMode = "jwt"
	if c.HTTPListenHost() != "" || c.GRPCListenHost() != "" || DescribeHost(c.HTTPListenHost()) != "every interface" {
		t.Fatalf("jwt: %q %q", c.HTTPListenHost(), c.GRPCListenHost())
	}
	c.HTTPBindAddress, c.GRPCBindAddress = "10.1.2.3", "*"
	if c.HTTPListenHost() != "10.1.2.3" || c.GRPCListenHost() != "" {
		t.Fatalf("explicit: %q %q", c.HTTPListenHost(), c.GRPCListenHost())
	}
	c.HTTPBindAddress = "bad address/"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "SVC_HTTP_BIND_ADDRESS") {
		t.Fatalf("bad address: %v", err)
	}
}

// TestSavepointIntervalOnlyDefault: svc has no schema-extension log, so a
// non-default interval is refused with a line naming the variable.
func TestSavepointIntervalOnlyDefault(t *testing.T) {
	for val, ok := range map[string]bool{"64": true, "0": true, "128": false} {
		_, err := Load(Source{Getenv: env{"SVC_SCHEMA_SAVEPOINT_INTERVAL": val}.getenv})
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "SVC_SCHEMA_SAVEPOINT_INTERVAL")) {
			t.Errorf("%s: %v", val, err)
		}
	}
}

// TestMockOnTheNetworkNeedsSayingSo (issue 26): mock authentication by
// default on an address other machines reach (the container image's
// every-interface binding) refuses to start naming SVC_IAM_MODE; said
// explicitly, or on loopback, or in jwt mode, it starts.
func TestMockOnTheNetworkNeedsSayingSo(t *testing.T) {
	for _, tc := range []struct {
		e       env
		refused bool
	}{
		{env{}, false},
		{env{"SVC_HTTP_BIND_ADDRESS": "*"}, true},
		{env{"SVC_GRPC_BIND_ADDRESS": "10.1.2.3"}, true},
		{env{"SVC_HTTP_BIND_ADDRESS": "127.0.0.2", "SVC_GRPC_BIND_ADDRESS": "localhost"}, false},
		{env{"SVC_HTTP_BIND_ADDRESS": "::1"}, false},
		{env{"SVC_HTTP_BIND_ADDRESS": "*", "SVC_IAM_MODE": "mock"}, false},
	} {
		_, err := loadEnv(t, tc.e)
		if refused := err != nil && strings.Contains(err.Error(), "SVC_IAM_MODE"); refused != tc.refused {
			t.Errorf("%v: %v, refused want %v", tc.e, err, tc.refused)
		}
	}
}
