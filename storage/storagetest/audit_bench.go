package storagetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

// BenchCreateAudit runs creates through s, n entities per transaction,
// with (audit) or without the three audit events the entity service
// writes per create, so the two can be compared on one engine.
func BenchCreateAudit(b *testing.B, s storage.Entities) {
	m := storage.ModelKey{Name: "benchaudit", Version: 1}
	doc := []byte(`{"name":"n","address":{"street":"s","city":"c"},"tags":["a","b"],"amount":12.5}`)
	for _, n := range []int{1, 100} {
		for _, audit := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/audit=%v", n, audit), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					tx := &storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, n)}
					for j := range tx.Writes {
						tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: doc, Transition: "loopback"}
					}
					if audit {
						withAudit(tx)
					}
					if _, err := s.Commit(context.Background(), tx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entities/s")
			})
		}
	}
}

// BenchEntityAudit reads the first page (20) of an entity with 30 events.
func BenchEntityAudit(b *testing.B, s storage.Entities, a storage.Audits) {
	m := storage.ModelKey{Name: "benchaudit", Version: 1}
	tx := withAudit(&storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: []byte(`{}`)}}})
	id := tx.Writes[0].ID
	ctx := context.Background()
	if _, err := s.Commit(ctx, tx); err != nil {
		b.Fatal(err)
	}
	for v := int64(1); v < 10; v++ {
		tx := withAudit(&storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u",
			Writes: []storage.Write{{ID: id, State: "CREATED", Data: []byte(`{}`), ExpectVersion: v}}})
		if _, err := s.Commit(ctx, tx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, more, err := a.EntityAudit(ctx, "bench", id, storage.AuditFilter{}, 0, 20)
		if err != nil || len(evs) != 20 || !more {
			b.Fatalf("%d events, more=%v: %v", len(evs), more, err)
		}
	}
}
