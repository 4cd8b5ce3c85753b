package memory

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

var benchDoc = []byte(fmt.Sprintf(`{"name":"n","address":{"street":"%s","city":"c"},"tags":["a","b"],"notes":"%s"}`,
	strings.Repeat("s", 100), strings.Repeat("lorem ipsum ", 70)))

// BenchmarkCommitCollection: one transaction of 1000 creates of ~1 KB.
func BenchmarkCommitCollection(b *testing.B) {
	s := NewEntities()
	m := storage.ModelKey{Name: "bench", Version: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), Writes: make([]storage.Write, 1000)}
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: benchDoc, Transition: "loopback"}
		}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkGet reads one entity's latest revision.
func BenchmarkGet(b *testing.B) { benchGet(b, nil) }

// BenchmarkHeapPer100k reports the live heap of 100k entities with ~1 KB
// documents (one revision each), after a GC: the memory engine's footprint.
func BenchmarkHeapPer100k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := NewEntities()
		m := storage.ModelKey{Name: "bench", Version: 1}
		for c := 0; c < 100; c++ {
			tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), Writes: make([]storage.Write, 1000)}
			for j := range tx.Writes {
				tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: benchDoc, Transition: "loopback"}
			}
			if _, err := s.Commit(context.Background(), tx); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/100k")
		b.ReportMetric(float64(len(benchDoc)), "docB")
		runtime.KeepAlive(s)
	}
}

// BenchmarkCommitOneIntoLarge: single-entity creates (the loadgen `create`
// scenario's store work) into a model that already holds 500k entities,
// where every hash insert misses the cache: it shows what a sustained
// ingest costs, not the first seconds of an empty store.
func BenchmarkCommitOneIntoLarge(b *testing.B) {
	s := NewEntities()
	m := storage.ModelKey{Name: "bench", Version: 1}
	for i := 0; i < 500; i++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), Writes: make([]storage.Write, 1000)}
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: benchDoc}
		}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := uuid.Must(uuid.NewUUID())
			tx := &storage.Tx{Tenant: "t", ID: id, Writes: []storage.Write{{ID: id, Model: m, State: "CREATED", Data: benchDoc}}}
			if _, err := s.Commit(context.Background(), tx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGetAttributed is Get of an entity whose revision recorded an
// attribution (every create through the API does): the entity and the
// attribution's copy come in one allocation.
func BenchmarkGetAttributed(b *testing.B) { benchGet(b, &storage.Attribution{UserKind: "user"}) }

// benchGet reads, from every core, one entity created with the given
// attribution (nil: none).
func benchGet(b *testing.B, attr *storage.Attribution) {
	s := NewEntities()
	id := uuid.Must(uuid.NewUUID())
	s.Commit(context.Background(), &storage.Tx{Tenant: "t", ID: id, Attribution: attr,
		Writes: []storage.Write{{ID: id, Model: storage.ModelKey{Name: "m", Version: 1}, State: "CREATED", Data: benchDoc}}})
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(context.Background(), "t", id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
