package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

// BenchCreateArmed commits single audited creates without and with one
// armed task, the storage share of arming a scheduled transition on
// create (on PostgreSQL the task costs the single-statement path).
func BenchCreateArmed(b *testing.B, s storage.Entities) {
	m := storage.ModelKey{Name: "bencharmed", Version: 1}
	doc := []byte(`{"name":"n","amount":12.5}`)
	at := time.Now().Add(time.Hour)
	for _, armed := range []bool{false, true} {
		name := "plain"
		if armed {
			name = "armed"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				id := uuid.Must(uuid.NewUUID())
				tx := withAudit(&storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u",
					Writes: []storage.Write{{ID: id, Model: m, State: "WAIT", Data: doc, Transition: "loopback"}}})
				if armed {
					tx.Tasks = []storage.TaskOp{{Task: storage.ScheduledTask{ID: uuid.UUID(id).String(), EntityID: id, SourceState: "WAIT",
						Transition: "timeout", ScheduledTime: at}}}
				}
				if _, err := s.Commit(context.Background(), tx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
