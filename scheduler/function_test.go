package scheduler

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute"
	"svc/compute/member"
	"svc/entity"
	"svc/iam"
	"svc/internal/await"
	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

type memberTokens map[string]*iam.Principal

func (m memberTokens) VerifyToken(_ context.Context, tok string) (*iam.Principal, error) {
	if p := m[tok]; p != nil {
		return p, nil
	}
	return nil, errors.New("bad token")
}

// TestFunctionScheduleOverGRPC arms function schedules through a real
// compute member over loopback gRPC: the member's fire time is used and
// the scheduler fires it; an expiry at the fire time is born expired (the
// write succeeds, nothing is armed, SCHEDULED_TRANSITION_EXPIRE is
// recorded); a result of another kind, or with unknown fields, fails the
// write with 500 SCHEDULE_FUNCTION_INVALID_RESULT.
func TestFunctionScheduleOverGRPC(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := compute.New(compute.Config{}, memberTokens{"m2m": {Kind: "service", UserID: "svc-1", TenantID: "A", Roles: []string{iam.RoleM2M}}}, log)
	srv.Start(lis, nil)
	t.Cleanup(srv.Stop)
	seen := make(chan *member.Call, 16)
	m, err := member.Connect(ctx, member.Config{Endpoint: lis.Addr().String(), Token: "m2m", Tags: []string{"sched"}, Log: log}, member.Handlers{
		Function: func(_ context.Context, c *member.Call) (string, json.RawMessage, error) {
			seen <- c
			var doc struct {
				Mode string `json:"mode"`
			}
			if c.Request.Payload != nil {
				_ = json.Unmarshal(c.Request.Payload.Data, &doc)
			}
			switch doc.Mode {
			case "soon":
				return "Schedule", json.RawMessage(`{"fireAfterMs":100,"expireAfterMs":60000}`), nil
			case "expired":
				return "Schedule", json.RawMessage(`{"fireAfterMs":1000,"expireAfterMs":0}`), nil
			case "kind":
				return "Duration", json.RawMessage(`{"fireAfterMs":1}`), nil
			}
			return "Schedule", json.RawMessage(`{"fireAfterMs":1,"when":"now"}`), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })

	ms, es := memory.NewModels(), memory.NewEntities()
	key := storage.ModelKey{Name: "fn", Version: 1}
	if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED", Schema: []byte(`{"$":{".mode":"STRING"}}`)}); err != nil {
		t.Fatal(err)
	}
	msvc := model.New(ms, nil)
	if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(t, `{"workflows":[{"version":"1.3","name":"fn","initialState":"WAIT","states":{
	  "WAIT":{"transitions":[{"name":"due","next":"DONE","manual":false,"schedule":{"function":{"name":"fire-at",
	    "resultKind":"Schedule","calculationNodesTags":"sched","context":"c1","responseTimeoutMs":5000}}}]},"DONE":{}}}]}`), log); err != nil {
		t.Fatal(err)
	}
	eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Dispatcher: srv, Log: log}
	svc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)), entity.WithTasks(es.Tasks()))
	sched := New(es.Tasks(), svc, Options{ScanInterval: 20 * time.Millisecond, Log: log})
	sched.Start()
	t.Cleanup(func() { _ = sched.Stop(context.Background()) })

	uctx := context.WithValue(ctx, iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u1", TenantID: "A"})
	a := entity.Actor{Tenant: "A", User: "u1"}
	create := func(mode string) ([16]byte, error) {
		res, err := svc.Create(uctx, a, key, "JSON", []byte(`{"mode":"`+mode+`"}`), 100)
		if err != nil {
			return [16]byte{}, err
		}
		return res.Chunks[0].IDs[0], nil
	}

	soon, err := create("soon")
	if err != nil {
		t.Fatal(err)
	}
	c := <-seen
	if c.Request.FunctionName != "fire-at" || c.Request.Transition.Name != "due" || c.Request.Parameters != "c1" || c.AuthID != "u1" {
		t.Fatalf("function request %+v auth %s", c.Request, c.AuthID)
	}
	ts, _ := es.Tasks().EntityTasks(ctx, "A", soon)
	if len(ts) != 1 || ts[0].TimeoutMs == nil || *ts[0].TimeoutMs != 60000 {
		t.Fatalf("armed %+v", ts)
	}
	await.Until(t, 30*time.Second, func() bool {
		e, err := svc.Get(uctx, "A", soon, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e.State == "DONE"
	}, "the function schedule fires")

	born, err := create("expired")
	if err != nil {
		t.Fatalf("born-expired write failed: %v", err)
	}
	<-seen
	if ts, _ := es.Tasks().EntityTasks(ctx, "A", born); len(ts) != 0 {
		t.Fatalf("born-expired task armed: %+v", ts)
	}
	evs, _, err := es.Audits().EntityAudit(ctx, "A", born, storage.AuditFilter{}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if !bytes.Contains([]byte(joined(types)), []byte("SCHEDULED_TRANSITION_EXPIRE")) || bytes.Contains([]byte(joined(types)), []byte("ARM")) {
		t.Fatalf("born-expired trail %v", types)
	}

	for _, mode := range []string{"kind", "unknown"} {
		_, err := create(mode)
		<-seen
		e, ok := apierr.As(err)
		if !ok || e.Code != apierr.ScheduleFunctionInvalidResult {
			t.Fatalf("%s: %v", mode, err)
		}
	}
	if n, _ := es.Count(ctx, "A", key); n != 2 {
		t.Fatalf("%d entities, want the two valid ones", n)
	}
}

func joined(s []string) string {
	out := ""
	for _, x := range s {
		out += x + " "
	}
	return out
}
