package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/postgres"
	"svc/workflow"
	"svc/workflow/workflowtest"
)

// BenchmarkScanFireBatch is one scan of a full batch: claim 100 due tasks
// and fire them (criterion, transition, re-read, CAS save, task delete,
// audit) until all are done. The 100 entities are created, armed, outside
// the timer.
func BenchmarkScanFireBatch(b *testing.B) {
	for _, engine := range []string{"memory", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			ctx := context.Background()
			log := slog.New(slog.DiscardHandler)
			var ms storage.Models
			var es storage.Entities
			var ts storage.ScheduledTasks
			if engine == "postgres" {
				db, err := postgres.Open(ctx, postgres.Options{URL: testDBURL, MaxConns: 16, AcquireTimeout: 5 * time.Second,
					StatementTimeout: time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				ms, es, ts = db.Models(), db.Entities(), db.Tasks()
			} else {
				m := memory.NewEntities()
				ms, es, ts = memory.NewModels(), m, m.Tasks()
			}
			key := storage.ModelKey{Name: "bench" + time.Now().Format("150405.000000000"), Version: 1}
			if err := ms.PutModel(ctx, &storage.Model{Tenant: "A", Key: key, State: "LOCKED", Schema: []byte(`{"$":{".n":"INTEGER"}}`)}); err != nil {
				b.Fatal(err)
			}
			msvc := model.New(ms, nil)
			if err := msvc.ImportWorkflows(ctx, "A", key, workflowtest.ParseImport(b, `{"workflows":[{"version":"1.3","name":"w","initialState":"WAIT","states":{
			  "WAIT":{"transitions":[{"name":"timeout","next":"DONE","manual":false,"schedule":{"delayMs":1},
			    "criterion":{"type":"simple","jsonPath":"$.n","operatorType":"EQUALS","value":1}}]},"DONE":{}}}]}`), log); err != nil {
				b.Fatal(err)
			}
			eng := &workflow.Engine{Criteria: workflow.NewPredicateCriteria(0), Log: log}
			svc := entity.New(es, ms, entity.GateOf(msvc), entity.WithWorkflow(entity.NewEngineWorkflow(eng)), entity.WithTasks(ts))
			future := time.Now().Add(time.Hour)
			s := New(ts, svc, Options{BatchSize: 100, Now: func() time.Time { return future }, Log: log})
			uctx := context.WithValue(ctx, iam.PrincipalKey, &iam.Principal{Kind: "user", UserID: "u1", TenantID: "A"})
			body := []byte(`[` + repeat(`{"n":1}`, 100) + `]`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := svc.Create(uctx, entity.Actor{Tenant: "A", User: "u1"}, key, "JSON", body, 100); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				n, err := s.Scan(ctx)
				if err != nil || n != 100 {
					b.Fatalf("claimed %d: %v", n, err)
				}
				s.Wait()
			}
			b.StopTimer()
			if n, _ := es.Count(ctx, "A", key); n != int64(100*b.N) {
				b.Fatalf("%d entities", n)
			}
			if counts, _ := es.CountByState(ctx, "A", key, nil); len(counts) != 1 || counts[0].State != "DONE" {
				b.Fatalf("states %+v", counts)
			}
		})
	}
}
