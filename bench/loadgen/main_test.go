package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"svc/config"
	"svc/fast"
)

// TestHelpScenarioAgainstRealServer runs a short, bounded load over
// loopback and checks the tool counts what it sent.
func TestHelpScenarioAgainstRealServer(t *testing.T) {
	srv, err := fast.New(config.Defaults(), fast.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListeners(ctx, apiLn, adminLn, nil) }()
	defer func() { cancel(); <-done }()

	res, err := Run(Options{Base: "http://" + apiLn.Addr().String() + "/api", Concurrency: 4, Duration: 5 * time.Second, MaxRequests: 400}, scenarios["help"])
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 400 || res.Errors != 0 {
		t.Fatalf("result %s", res)
	}
	if res.P50 <= 0 || res.P99 < res.P50 {
		t.Errorf("percentiles %s", res)
	}
	if !strings.Contains(res.String(), "req/s") {
		t.Error(res.String())
	}
}

func TestTargetGuard(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080/api", "http://localhost:1/api", "http://[::1]:8080"} {
		if err := checkTarget(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1/api", "http://example.com/api", "::nope"} {
		if err := checkTarget(bad, false); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
