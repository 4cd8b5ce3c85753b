package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"svc/bench/orderdoc"
	"svc/storage"
	"svc/storage/storagetest"
)

// BenchmarkFileSize measures what the database file costs per ~1 KB order
// entity (issue 27 item 7): n creates in collections of 1000 with the audit
// events the entity service writes, then one update of each (a second
// revision, its own audit events), the file measured after a clean close
// (the WAL checkpointed into it) and again after VACUUM. Run it once:
//
//	go test -run '^$' -bench BenchmarkFileSize -benchtime 1x ./storage/sqlite/
func BenchmarkFileSize(b *testing.B) {
	const n, batch = 20000, 1000
	ctx := context.Background()
	for it := 0; it < b.N; it++ {
		path := filepath.Join(b.TempDir(), "svc.db")
		ids := make([][16]byte, n)
		commit := func(update bool) {
			db, err := Open(ctx, testOptions(path))
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < n; lo += batch {
				tx := &storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, batch)}
				for j := range tx.Writes {
					i := lo + j
					w := storage.Write{Model: order, State: "CREATED", Data: orderdoc.Append(nil, i), Transition: "loopback"}
					if update {
						w.ID, w.State, w.Data, w.ExpectVersion = ids[i], "PAID", orderdoc.Append(nil, i+n), 1
					} else {
						ids[i] = uuid.Must(uuid.NewUUID())
						w.ID = ids[i]
					}
					tx.Writes[j] = w
				}
				if _, err := db.Entities().Commit(ctx, storagetest.WithServiceAudit(tx)); err != nil {
					b.Fatal(err)
				}
			}
			db.Close()
		}
		size := func() float64 {
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				if wal, _ := os.Stat(path + "-wal"); wal.Size() > 0 {
					b.Fatalf("WAL of %d bytes left after close: the figure would miss it", wal.Size())
				}
			}
			return float64(fi.Size())
		}
		commit(false)
		one := size()
		commit(true)
		two := size()
		db, err := Open(ctx, testOptions(path))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.w.conn.ExecContext(ctx, "VACUUM"); err != nil {
			b.Fatal(err)
		}
		db.Close()
		vac := size()
		b.ReportMetric(one/n, "file-B/entity")
		b.ReportMetric((two-one)/n, "file-B/revision")
		b.ReportMetric(vac/n, "vacuumed-B/entity(2rev)")
		b.ReportMetric(float64(len(orderdoc.Append(nil, n))), "doc-B")
	}
}
