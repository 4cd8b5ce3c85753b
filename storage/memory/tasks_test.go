package memory

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestTasksContract(t *testing.T) {
	storagetest.Tasks(t, func(*testing.T) (storage.Entities, storage.ScheduledTasks) {
		s := NewEntities()
		return s, s.Tasks()
	})
}

func BenchmarkCreateArmed(b *testing.B) { storagetest.BenchCreateArmed(b, NewEntities()) }

// BenchmarkClaimDue claims a batch of 100 due tasks among 100 000 armed for
// later: the scan does not walk the waiting ones.
func BenchmarkClaimDue(b *testing.B) {
	s := NewEntities()
	ts := s.Tasks()
	now := time.Now()
	arm := func(n int, at time.Time) {
		ops := make([]storage.TaskOp, n)
		for i := range ops {
			id := uuid.Must(uuid.NewUUID())
			ops[i] = storage.TaskOp{Task: storage.ScheduledTask{ID: uuid.UUID(id).String(), EntityID: id, SourceState: "S", Transition: "t", ScheduledTime: at}}
		}
		if _, err := s.Commit(context.Background(), &storage.Tx{Tenant: "A", ID: uuid.Must(uuid.NewUUID()), Tasks: ops}); err != nil {
			b.Fatal(err)
		}
	}
	arm(100000, now.Add(time.Hour))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		arm(100, now.Add(-time.Second))
		b.StartTimer()
		got, err := ts.ClaimDue(context.Background(), now, now.Add(time.Hour+time.Minute), 100)
		if err != nil || len(got) != 100 {
			b.Fatalf("claimed %d: %v", len(got), err)
		}
	}
}

func TestChangesContract(t *testing.T) {
	storagetest.Changes(t, func(*testing.T) (storage.Entities, storage.ChangeLog) {
		s := NewEntities()
		return s, s.Changes()
	})
}

func TestSubscriptionsContract(t *testing.T) {
	storagetest.SubscriptionStore(t, func(*testing.T) storage.Subscriptions { return NewSubscriptions() })
}
