package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
	"svc/storage/pgtest"
)

// BenchmarkStreamIndexIngestCost: what the stream-data indexes of
// migration 0018 (the btree entities_model_created and the BRIN
// entities_updated_brin) cost entity creates. Each variant runs in a
// fresh database, "indexes" as migrated, "without" after dropping both;
// single is one ~1 KB entity per commit (the one-statement create),
// collection 1000 per commit.
func BenchmarkStreamIndexIngestCost(b *testing.B) {
	doc := []byte(fmt.Sprintf(`{"name":"n","address":{"street":"%s","city":"c"},"tags":["a","b"],"notes":"%s"}`,
		strings.Repeat("s", 100), strings.Repeat("lorem ipsum ", 70)))
	m := storage.ModelKey{Name: "bench", Version: 1}
	// indexBytes is what the entities table's indexes take per live row:
	// unlike time on a shared box, it does not depend on the load.
	indexBytes := func(b *testing.B, db *DB) {
		c, err := db.acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Release()
		var size, rows int64
		if err := c.QueryRow(context.Background(), `SELECT pg_indexes_size('entities'), (SELECT count(*) FROM entities)`).Scan(&size, &rows); err != nil {
			b.Fatal(err)
		}
		if rows > 0 {
			b.ReportMetric(float64(size)/float64(rows), "idx-B/entity")
		}
	}
	open := func(b *testing.B, drop bool) *DB {
		opts := testOptions()
		opts.URL = pgtest.New(b, "ixcost")
		db, err := Open(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(db.Close)
		if drop {
			c, err := db.acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			_, err = c.Exec(context.Background(), `DROP INDEX entities_model_created; DROP INDEX entities_updated_brin`)
			c.Release()
			if err != nil {
				b.Fatal(err)
			}
		}
		return db
	}
	for _, v := range []struct {
		name string
		drop bool
	}{{"indexes", false}, {"without", true}} {
		b.Run("single/"+v.name, func(b *testing.B) {
			db := open(b, v.drop)
			s := db.Entities()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u",
					Writes: []storage.Write{{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: doc, Transition: "loopback"}}}
				if _, err := s.Commit(context.Background(), tx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entities/s")
			indexBytes(b, db)
		})
		b.Run("collection/"+v.name, func(b *testing.B) {
			db := open(b, v.drop)
			s := db.Entities()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, 1000)}
				for j := range tx.Writes {
					tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: m, State: "CREATED", Data: doc, Transition: "loopback"}
				}
				if _, err := s.Commit(context.Background(), tx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/time.Since(start).Seconds(), "entities/s")
			indexBytes(b, db)
		})
	}
}
