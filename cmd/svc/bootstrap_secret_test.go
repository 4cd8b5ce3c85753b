package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"svc/internal/testkeys"
	"svc/platform/config"
	"svc/storage/memory"
)

// TestBootstrapSecretShortWarning: start-up warns once, without the secret,
// when the bootstrap secret is shorter than 32 characters, and not at all
// for a long one.
func TestBootstrapSecretShortWarning(t *testing.T) {
	keyPEM := testkeys.PEM(5)
	for _, c := range []struct {
		secret string
		warns  int
	}{
		{"demo-secret", 1},
		{"0123456789abcdefghijklmnopqrstu", 1},  // 31
		{"0123456789abcdefghijklmnopqrstuv", 0}, // 32
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		cfg := config.Defaults()
		cfg.IAMMode, cfg.JWTSigningKey = "jwt", keyPEM
		cfg.BootstrapClientID, cfg.BootstrapClientSecret = "ops-client", c.secret
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		m, err := startJWT(context.Background(), cfg, memory.NewIAMStores(), nil, log)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		out := buf.String()
		if n := strings.Count(out, "shorter than 32 characters"); n != c.warns {
			t.Errorf("secret of %d characters: %d warnings, want %d\n%s", len(c.secret), n, c.warns, out)
		}
		if strings.Contains(out, c.secret) {
			t.Errorf("the log carries the secret:\n%s", out)
		}
	}
}
