package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

// BenchmarkCommitCollection: one transaction of 1000 creates of ~1 KB
// documents (the engine's share of a collection ingest).
func BenchmarkCommitCollection(b *testing.B) {
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := db.Entities()
	m := storage.ModelKey{Name: "bench", Version: 1}
	doc := []byte(fmt.Sprintf(`{"name":"n","address":{"street":"%s","city":"c"},"tags":["a","b"],"notes":"%s"}`,
		strings.Repeat("s", 100), strings.Repeat("lorem ipsum ", 70)))
	b.ReportAllocs()
	b.SetBytes(int64(1000 * len(doc)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), Writes: make([]storage.Write, 1000)}
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: doc, Transition: "loopback"}
		}
		if _, err := s.Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "entities/s")
}
