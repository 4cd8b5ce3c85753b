package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"svc/fast"
	"svc/platform/config"
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

// TestWorkersSpreadOverBases: with several targets (cluster nodes) every
// target gets its share of the workers' requests.
func TestWorkersSpreadOverBases(t *testing.T) {
	var hits [2]atomic.Int64
	var bases []string
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits[i].Add(1)
			w.Write([]byte(`{}`))
		}))
		defer srv.Close()
		bases = append(bases, srv.URL+"/api")
	}
	res, err := Run(Options{Base: bases[0], Bases: bases, Concurrency: 4, Duration: 30 * time.Second, MaxRequests: 200}, scenarios["help"])
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || hits[0].Load() == 0 || hits[1].Load() == 0 || hits[0].Load()+hits[1].Load() != 200 {
		t.Fatalf("result %s; hits %d and %d", res, hits[0].Load(), hits[1].Load())
	}
}
