package main

import (
	"testing"
	"time"

	"svc/platform/config"
)

// TestComputeConfig: the compute server's settings come from the
// configuration; the dispatch wait applies only in cluster mode.
func TestComputeConfig(t *testing.T) {
	c := config.Defaults()
	cfg, err := computeConfig(c)
	if err != nil || cfg.TLS != nil || cfg.KeepaliveInterval != 10*time.Second || cfg.KeepaliveTimeout != 30*time.Second || cfg.DispatchWaitTimeout != 0 {
		t.Fatalf("single node: %+v", cfg)
	}
	c.ClusterEnabled = true
	if cfg, _ := computeConfig(c); cfg.DispatchWaitTimeout != 5*time.Second {
		t.Fatalf("cluster: %+v", cfg)
	}
	c.TLSCertFile, c.TLSKeyFile = "/nonexistent/cert.pem", "/nonexistent/key.pem"
	if _, err := computeConfig(c); err == nil {
		t.Fatal("a missing TLS key pair was accepted")
	}
}
