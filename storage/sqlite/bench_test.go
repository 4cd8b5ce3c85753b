package sqlite

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/bench/orderdoc"
	"svc/storage"
	"svc/storage/storagetest"
)

// cpuTime is this process's user+system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the process CPU per operation (cpu-us/op) beside the
// wall-clock figures: on a shared machine it is the steadier measure.
func reportCPU(b *testing.B, start time.Duration, perOp int) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N*perOp), "cpu-us/entity")
}

// reportCheckpoints adds the checkpoints per 100 000 entities written:
// those beside the writer and those the writer ran itself (checkpoint.go).
func reportCheckpoints(b *testing.B, db *DB, entities int) {
	if db.w.ck == nil {
		return
	}
	b.ReportMetric(float64(db.w.ck.runs.Load())*1e5/float64(entities), "ckpt-beside/1e5")
	b.ReportMetric(float64(db.w.ck.inline.Load())*1e5/float64(entities), "ckpt-writer/1e5")
}

func orderTx(i int) *storage.Tx {
	return &storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "CREATED", Data: orderdoc.Append(nil, i), Transition: "loopback"}}}
}

// BenchmarkCreateParallel: single creates of a ~1 KB order from many
// goroutines at once (RunParallel, GOMAXPROCS×parallelism 8): the group
// commit path. groups/op is the mean group size's inverse.
func BenchmarkCreateParallel(b *testing.B) {
	db := openTest(b)
	b.ReportAllocs()
	b.SetParallelism(8)
	g0, j0 := db.w.groups.Load(), db.w.jobs.Load()
	c0 := cpuTime()
	b.ResetTimer()
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(n.Add(1))
			if _, err := db.Entities().Commit(context.Background(), orderTx(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.StopTimer()
	reportCPU(b, c0, 1)
	reportCheckpoints(b, db, b.N)
	if g := db.w.groups.Load() - g0; g > 0 {
		b.ReportMetric(float64(db.w.jobs.Load()-j0)/float64(g), "jobs/group")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkCommitCollection: one transaction of 1000 ~1 KB order creates.
func BenchmarkCommitCollection(b *testing.B) {
	db := openTest(b)
	b.ReportAllocs()
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx := &storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, 1000)}
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "CREATED", Data: orderdoc.Append(nil, i*1000+j), Transition: "loopback"}
		}
		if _, err := db.Entities().Commit(context.Background(), tx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, c0, 1000)
	reportCheckpoints(b, db, b.N*1000)
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkGet reads one of 10,000 orders' latest revision, in parallel.
func BenchmarkGet(b *testing.B) {
	db := openTest(b)
	ctx := context.Background()
	ids := make([][16]byte, 10000)
	tx := &storage.Tx{Tenant: "bench", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, len(ids))}
	for j := range tx.Writes {
		ids[j] = uuid.Must(uuid.NewUUID())
		tx.Writes[j] = storage.Write{ID: ids[j], Model: order, State: "CREATED", Data: orderdoc.Append(nil, j)}
	}
	if _, err := db.Entities().Commit(ctx, tx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	c0 := cpuTime()
	b.ResetTimer()
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Entities().Get(ctx, "bench", ids[n.Add(1)%uint64(len(ids))]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.StopTimer()
	reportCPU(b, c0, 1)
}

func BenchmarkCreateAudit(b *testing.B) { storagetest.BenchCreateAudit(b, openTest(b).Entities()) }

func BenchmarkEntityAudit(b *testing.B) {
	db := openTest(b)
	storagetest.BenchEntityAudit(b, db.Entities(), db.Audits())
}

func BenchmarkCreateArmed(b *testing.B) { storagetest.BenchCreateArmed(b, openTest(b).Entities()) }
