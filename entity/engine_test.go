package entity

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/iam"
	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

// TestEngineWorkflowDrivesEntities runs entity writes through imported
// workflows on the real engine and condition language: selection and an
// automated cascade by criterion at create, a processor (local dispatcher)
// rewriting data and seeing the request's principal, named transitions and
// their errors, the loopback, and the transitions list.
func TestEngineWorkflowDrivesEntities(t *testing.T) {
	ctx := context.WithValue(context.Background(), iam.PrincipalKey,
		&iam.Principal{Kind: "user", UserID: "u1", TenantID: "A", Roles: []string{"ROLE_USER"}})
	ms, es := memory.NewModels(), memory.NewEntities()
	msvc := model.New(ms, nil)
	key := storage.ModelKey{Name: "order", Version: 1}
	if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED",
		Schema: []byte(`{"$":{".amount":"INTEGER",".note":"STRING"}}`)}); err != nil {
		t.Fatal(err)
	}
	d := workflow.NewLocalDispatcher()
	var auth workflow.Auth
	var seenID, seenTx string
	d.Processor("stamp", func(_ context.Context, c *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
		auth, seenID, seenTx = c.Auth, c.Meta.ID, c.TransactionID
		return &workflow.ProcessorResult{Success: true, Data: []byte(`{"amount":1000,"note":"approved"}`)}, nil
	})
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: d, Log: slog.New(slog.DiscardHandler)}
	svc := New(es, ms, GateOf(msvc), WithWorkflow(NewEngineWorkflow(eng)))
	a := Actor{Tenant: "A", User: "u1"}

	create := func(body string) *storage.Entity {
		t.Helper()
		res, err := svc.Create(ctx, a, key, "JSON", []byte(body), 100)
		if err != nil {
			t.Fatalf("create %s: %v", body, err)
		}
		e, err := svc.Get(ctx, "A", res.Chunks[0].IDs[0], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// No workflows imported: the default lifecycle.
	if e := create(`{"amount":5}`); e.State != StateCreated {
		t.Fatalf("default workflow state %s", e.State)
	}

	if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(t, `{"workflows":[{"version":"1.3","name":"orders","initialState":"NEW","states":{
	  "NEW":{"transitions":[
	    {"name":"bigOrder","next":"REVIEW","manual":false,"criterion":{"type":"simple","jsonPath":"$.amount","operatorType":"GREATER_OR_EQUAL","value":100}},
	    {"name":"smallOrder","next":"APPROVED","manual":false}]},
	  "REVIEW":{"transitions":[
	    {"name":"approve","next":"APPROVED","manual":true,"processors":[{"name":"stamp","executionMode":"SYNC"}]},
	    {"name":"reject","next":"REJECTED","manual":true,"criterion":{"type":"simple","jsonPath":"$.note","operatorType":"IS_NULL"}}]},
	  "APPROVED":{},"REJECTED":{}}}]}`), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if e := create(`{"amount":5}`); e.State != "APPROVED" {
		t.Fatalf("small order state %s", e.State)
	}
	big := create(`{"amount":500}`)
	if big.State != "REVIEW" {
		t.Fatalf("big order state %s", big.State)
	}
	if ts, err := svc.Transitions(ctx, "A", big.ID, nil, nil); err != nil || strings.Join(ts, ",") != "approve,reject" {
		t.Fatalf("transitions in REVIEW: %v %v", ts, err)
	}

	// Loopback keeps REVIEW (no automated transition there).
	if _, err := svc.Update(ctx, a, big.ID, "JSON", []byte(`{"amount":600}`), "", ""); err != nil {
		t.Fatal(err)
	}
	// Unknown transition: 400 TRANSITION_NOT_FOUND; criterion false: WORKFLOW_FAILED.
	_, err := svc.Update(ctx, a, big.ID, "JSON", []byte(`{"amount":600}`), "ship", "")
	if e, ok := apierr.As(err); !ok || e.Code != apierr.TransitionNotFound {
		t.Fatalf("unknown transition: %v", err)
	}
	_, err = svc.Update(ctx, a, big.ID, "JSON", []byte(`{"amount":600,"note":"x"}`), "reject", "")
	if e, ok := apierr.As(err); !ok || e.Code != apierr.WorkflowFailed || !strings.Contains(e.Message, "criterion not matched") {
		t.Fatalf("reject with a note: %v", err)
	}
	if e, _ := svc.Get(ctx, "A", big.ID, nil, nil); e.State != "REVIEW" || string(e.Data) != `{"amount":600}` {
		t.Fatalf("failed transitions changed the entity: %s %s", e.State, e.Data)
	}
	// approve runs the processor, whose data is stored.
	txID, err := svc.Update(ctx, a, big.ID, "JSON", []byte(`{"amount":700}`), "approve", "")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := svc.Get(ctx, "A", big.ID, nil, nil)
	if e.State != "APPROVED" || string(e.Data) != `{"amount":1000,"note":"approved"}` || e.Transition != "approve" {
		t.Fatalf("after approve: %s %s %q", e.State, e.Data, e.Transition)
	}
	if auth.Kind != "user" || auth.ID != "u1" || len(auth.Roles) != 1 {
		t.Fatalf("processor saw principal %+v", auth)
	}
	if seenID != uuid.UUID(big.ID).String() || seenTx != uuid.UUID(txID).String() {
		t.Fatalf("processor saw entity %q in transaction %q, want %s in %s", seenID, seenTx, uuid.UUID(big.ID), uuid.UUID(txID))
	}
	if ts, err := svc.Transitions(ctx, "A", big.ID, nil, nil); err != nil || len(ts) != 0 {
		t.Fatalf("transitions in APPROVED: %v %v", ts, err)
	}
}

// TestEngineWorkflowRecreatedModel: a model deleted and created again
// reaches the same revision with other workflows; entities follow the new
// ones, not a cached compile of the old.
func TestEngineWorkflowRecreatedModel(t *testing.T) {
	ctx := context.Background()
	ms, es := memory.NewModels(), memory.NewEntities()
	msvc := model.New(ms, nil)
	svc := New(es, ms, GateOf(msvc), WithWorkflow(NewEngineWorkflow(&workflow.Engine{Log: slog.New(slog.DiscardHandler)})))
	key := storage.ModelKey{Name: "m", Version: 1}
	for _, final := range []string{"FIRST", "SECOND"} {
		if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED", Schema: []byte(`{"$":{".a":"INTEGER"}}`)}); err != nil {
			t.Fatal(err)
		}
		body := `{"workflows":[{"version":"1.3","name":"w","initialState":"` + final + `","states":{"` + final + `":{}}}]}`
		if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(t, body), slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Create(ctx, Actor{Tenant: "A"}, key, "JSON", []byte(`{"a":1}`), 100)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := svc.Get(ctx, "A", res.Chunks[0].IDs[0], nil, nil)
		if e.State != final {
			t.Fatalf("entity in %s, want %s", e.State, final)
		}
		if err := ms.DeleteModel(ctx, "A", key); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a distinct creation instant
	}
}
