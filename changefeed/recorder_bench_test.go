package changefeed

import (
	"context"
	"fmt"
	"testing"

	"svc/storage"
	"svc/storage/memory"
)

// BenchmarkCreate is one single-entity create through the Recorder on the
// memory engine, as the entity service commits it, with 0 subscriptions
// (the engine's own cost: one atomic load on top) and with 10 on the
// model (one event per create, no bodies); "engine" is the engine alone,
// without the Recorder.
func BenchmarkCreate(b *testing.B) {
	for _, n := range []int{-1, 0, 10} {
		name := fmt.Sprintf("subscriptions=%d", n)
		if n < 0 {
			name = "engine"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			e := memory.NewEntities()
			w := &Watched{}
			svc := New(memory.NewSubscriptions(), e.Changes(), w, Options{})
			for i := 0; i < n; i++ {
				if _, err := svc.Create(ctx, "t", []byte(`{"filter":{"modelName":"order","modelVersion":1}}`)); err != nil {
					b.Fatal(err)
				}
			}
			var rec storage.Entities = NewRecorder(e, w, nil)
			if n < 0 {
				rec = e
			}
			doc := []byte(`{"id":1,"customer":"c-1","total":12.5,"lines":[{"sku":"a","qty":2}]}`)
			ids := make([][16]byte, b.N)
			for i := range ids {
				ids[i] = id(b)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx := storage.Tx{Tenant: "t", ID: ids[i], User: "u",
					Writes: []storage.Write{{ID: ids[i], Model: order, State: "NEW", Data: doc, Transition: "loopback"}}}
				if _, err := rec.Commit(ctx, &tx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
