package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"svc/entity"
	"svc/fast"
	"svc/model"
	"svc/platform/config"
	"svc/storage/memory"
	"svc/workflow"
)

// TestCreateWorkflowScenario runs the scenario, bounded, against a real
// server with the workflow engine, and checks every entity reached DONE.
func TestCreateWorkflowScenario(t *testing.T) {
	ms, es := memory.NewModels(), memory.NewEntities()
	msvc := model.New(ms, nil)
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)))
	msvc.SetEntityCounter(esvc)
	srv, err := fast.New(config.Defaults(), fast.Deps{Model: msvc, Entities: esvc, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListeners(ctx, apiLn, adminLn, nil) }()
	defer func() { cancel(); <-done }()
	base := "http://" + apiLn.Addr().String() + "/api"

	res, err := Run(Options{Base: base, Concurrency: 4, Duration: 10 * time.Second, MaxRequests: 200}, scenarios["create-workflow"])
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 200 || res.Errors != 0 {
		t.Fatalf("result %s", res)
	}
	resp, err := http.Get(base + "/entity/stats/states/loadgenwf/1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"state":"DONE","count":200`) || strings.Contains(string(b), `"NEW"`) {
		t.Fatalf("states after the run: %s", b)
	}
}
