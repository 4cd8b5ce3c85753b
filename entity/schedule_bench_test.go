package entity

import (
	"context"
	"log/slog"
	"testing"

	"svc/iam"
	"svc/model"
	"svc/storage"
	"svc/storage/memory"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

// BenchmarkCreateArming is the arming overhead of a single create on the
// memory engine: the same one-state workflow without and with a delayMs
// schedule (the plan, the task upsert and its ARM event).
func BenchmarkCreateArming(b *testing.B) {
	for _, c := range []struct{ name, transitions string }{
		{"plain", `[{"name":"go","next":"DONE","manual":true}]`},
		{"scheduled", `[{"name":"go","next":"DONE","manual":true},{"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":60000,"timeoutMs":1000}}]`},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.WithValue(context.Background(), iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u1", TenantID: "A"})
			ms, es := memory.NewModels(), memory.NewEntities()
			key := storage.ModelKey{Name: "bench", Version: 1}
			if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED", Schema: []byte(`{"$":{".n":"INTEGER"}}`)}); err != nil {
				b.Fatal(err)
			}
			msvc := model.New(ms, nil)
			if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(b, `{"workflows":[{"version":"1.3","name":"w","initialState":"WAIT","states":{
			  "WAIT":{"transitions":`+c.transitions+`},"DONE":{}}}]}`), slog.New(slog.DiscardHandler)); err != nil {
				b.Fatal(err)
			}
			eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: slog.New(slog.DiscardHandler)}
			svc := New(es, ms, GateOf(msvc), WithWorkflow(NewEngineWorkflow(eng)), WithTasks(es.Tasks()))
			a := Actor{Tenant: "A", User: "u1"}
			body := []byte(`{"n":1}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := svc.Create(ctx, a, key, "JSON", body, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
		})
	}
}
