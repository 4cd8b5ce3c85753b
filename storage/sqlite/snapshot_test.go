package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/internal/await"
	"svc/storage"
)

// TestHeldSnapshotReadsYourWrites: with readers keeping the point
// connections' snapshots held (snapshot.go), every write is visible to a
// get that starts after the write was acknowledged, across many writes
// interleaved with reads, as at times and by transaction included; and
// without writes the snapshots are kept.
func TestHeldSnapshotReadsYourWrites(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	es := db.Entities()
	const writers, rounds = 4, 150
	ids := make([][16]byte, writers)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewUUID())
		tx := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "u",
			Writes: []storage.Write{{ID: ids[i], Model: order, State: "NEW", Data: []byte(`{"v":1}`)}}}
		if _, err := es.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := es.Get(ctx, "t1", ids[0]); err != nil {
			t.Fatal(err)
		}
	}
	if db.fast.gen.held.Load() == 0 {
		t.Fatal("no snapshot held after reads without writes")
	}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	errs := make(chan error, 2*writers+4)
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := es.Get(ctx, "t1", ids[(r+i)%writers]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var ws sync.WaitGroup
	for w := range writers {
		ws.Add(1)
		go func() {
			defer ws.Done()
			id := ids[w]
			for v := int64(1); v <= rounds; v++ {
				tx := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "u",
					Writes: []storage.Write{{ID: id, Model: order, State: "NEW", Data: []byte(fmt.Sprintf(`{"v":%d}`, v+1)), ExpectVersion: v}}}
				if _, err := es.Commit(ctx, tx); err != nil {
					errs <- err
					return
				}
				// Twice: the second read may reuse the snapshot the first took.
				for range 2 {
					got, err := es.Get(ctx, "t1", id)
					if err != nil {
						errs <- err
						return
					}
					if got.Version != v+1 || string(got.Data) != fmt.Sprintf(`{"v":%d}`, v+1) {
						errs <- fmt.Errorf("entity %d after writing version %d: read version %d %s", w, v+1, got.Version, got.Data)
						return
					}
				}
				byTx, err := es.GetByTx(ctx, "t1", id, tx.ID)
				if err != nil || byTx.Version != v+1 {
					errs <- fmt.Errorf("entity %d by transaction of version %d: %+v, %v", w, v+1, byTx, err)
					return
				}
				at, err := es.GetAt(ctx, "t1", id, time.Now())
				if err != nil || at.Version != v+1 {
					errs <- fmt.Errorf("entity %d as at now after version %d: %+v, %v", w, v+1, at, err)
					return
				}
			}
		}()
	}
	ws.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestHeldSnapshotsLetWALCheckpoint: held snapshots do not keep the WAL
// from being checkpointed and restarted. After a write the idle
// connections' stale snapshots are dropped without further reads; a
// checkpoint then copies every frame back; a snapshot taken after the last
// write (held, current) does not hold a checkpoint back; and the next
// write restarts the WAL from its beginning.
func TestHeldSnapshotsLetWALCheckpoint(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	es := db.Entities()
	other, err := sql.Open("sqlite", dsn(db.opt, false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	checkpoint := func() (log, done int) {
		t.Helper()
		var busy int
		if err := other.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		if busy != 0 {
			t.Fatalf("checkpoint busy")
		}
		return log, done
	}
	id := uuid.Must(uuid.NewUUID())
	write := func(v int64) {
		t.Helper()
		tx := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "u",
			Writes: []storage.Write{{ID: id, Model: order, State: "NEW", Data: []byte(`{"a":1}`), ExpectVersion: v}}}
		if _, err := es.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		t.Helper()
		for range 2 {
			if _, err := es.Get(ctx, "t1", id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// swept waits for the sweeper to drop the idle connections' snapshots,
	// all stale after a write, without any read.
	swept := func() {
		t.Helper()
		await.Until(t, await.Long, func() bool { return db.fast.gen.held.Load() == 0 },
			"stale snapshots dropped after a write (%d still held)", db.fast.gen.held.Load())
	}
	v := int64(0)
	for range 50 {
		write(v)
		v++
		read()
	}
	write(v)
	v++
	swept()
	read()
	if db.fast.gen.held.Load() == 0 {
		t.Fatal("no snapshot held after reads")
	}
	// Held since the last commit: nothing for them to hold back.
	if log, done := checkpoint(); log == 0 || done != log {
		t.Fatalf("checkpoint with current snapshots held: %d of %d frames", done, log)
	}
	// Several writes, so that the WAL is longer than one write's frames
	// whether or not the first of them restarted it (that depends on
	// whether the sweeper dropped the snapshots held above before the
	// writer began): a restart by the write below then shows as a
	// shorter WAL.
	for range 5 {
		write(v)
		v++
	}
	swept()
	log1, done := checkpoint()
	if done != log1 {
		t.Fatalf("checkpoint after the sweep: %d of %d frames", done, log1)
	}
	write(v)
	if log2, _ := checkpoint(); log2 >= log1 {
		t.Fatalf("the WAL did not restart: %d frames after one more write, %d before", log2, log1)
	}
	read()
}
