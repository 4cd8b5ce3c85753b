package memory

import (
	"context"
	"runtime"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
	"svc/storage/storagetest"
)

func BenchmarkCreateAudit(b *testing.B) { storagetest.BenchCreateAudit(b, NewEntities()) }

func BenchmarkEntityAudit(b *testing.B) {
	s := NewEntities()
	storagetest.BenchEntityAudit(b, s, s.Audits())
}

// BenchmarkAuditHeapPer100k is BenchmarkHeapPer100k with the three audit
// events the entity service writes per create: the difference is the
// footprint of the audit trail.
func BenchmarkAuditHeapPer100k(b *testing.B) {
	finish := []byte(`{"success":true}`)
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := NewEntities()
		m := storage.ModelKey{Name: "bench", Version: 1}
		for c := 0; c < 100; c++ {
			tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, 1000),
				Audit: make([]storage.AuditEvent, 0, 3000)}
			for j := range tx.Writes {
				id := uuid.Must(uuid.NewUUID())
				tx.Writes[j] = storage.Write{ID: id, Model: m, State: "CREATED", Data: benchDoc, Transition: "loopback"}
				tx.Audit = append(tx.Audit,
					storage.AuditEvent{EntityID: id, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: "CREATED", Details: "State machine started"},
					storage.AuditEvent{EntityID: id, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: "CREATED", Details: "State machine finished", Data: finish},
					storage.AuditEvent{EntityID: id, Kind: storage.AuditEntityChange, Type: storage.AuditCreate, State: "CREATED"})
			}
			if _, err := s.Commit(context.Background(), tx); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/100k")
		runtime.KeepAlive(s)
	}
}

// BenchmarkAuditHeapPer100kSingle is BenchmarkAuditHeapPer100k with one
// create per transaction, as single POSTs commit them: it adds what each
// transaction costs on its own (its document block, its shared audit
// record).
func BenchmarkAuditHeapPer100kSingle(b *testing.B) {
	finish := []byte(`{"success":true}`)
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := NewEntities()
		m := storage.ModelKey{Name: "bench", Version: 1}
		for c := 0; c < 100000; c++ {
			id := uuid.Must(uuid.NewUUID())
			tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u",
				Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: benchDoc, Transition: "loopback"}},
				Audit: []storage.AuditEvent{
					{EntityID: id, Kind: storage.AuditStateMachine, Type: "STATE_MACHINE_START", State: "CREATED", Details: "State machine started"},
					{EntityID: id, Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: "CREATED", Details: "State machine finished", Data: finish},
					{EntityID: id, Kind: storage.AuditEntityChange, Type: storage.AuditCreate, State: "CREATED"}}}
			if _, err := s.Commit(context.Background(), tx); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/100k")
		runtime.KeepAlive(s)
	}
}
