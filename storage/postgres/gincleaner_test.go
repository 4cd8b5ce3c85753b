package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/internal/await"
)

// TestGinCleanerMergesPendingListAfterWrites: creates leave entries in the
// document index's pending list; shortly after, the cleaner has merged
// them, so no later insert has to.
func TestGinCleanerMergesPendingListAfterWrites(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pgstattuple`); err != nil {
		t.Skipf("pgstattuple unavailable: %v", err)
	}
	pending := func() int64 {
		var n int64
		if err := db.pool.QueryRow(ctx, `SELECT pending_tuples FROM pgstatginindex('entities_doc')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// With the cleaner held off, writes stay pending: the measure works.
	db.gin.off.Store(true)
	es := db.Entities()
	for i := 0; i < 20; i++ {
		if _, err := es.Commit(ctx, singleCreateTx(t, uuid.Must(uuid.NewRandom()), fmt.Sprintf(`{"n":%d,"s":"x%d"}`, i, i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := pending(); n == 0 {
		t.Fatal("no pending entries after 20 creates with the cleaner off")
	}
	db.gin.off.Store(false)
	runs := db.gin.runs.Load()
	if _, err := es.Commit(ctx, singleCreateTx(t, uuid.Must(uuid.NewRandom()), `{"n":99}`)); err != nil {
		t.Fatal(err)
	}
	if !await.Poll(60*time.Second, func() bool { return db.gin.runs.Load() != runs && pending() == 0 }) {
		t.Fatalf("pending list not merged within 60 s: %d entries, %d cleanups", pending(), db.gin.runs.Load()-runs)
	}
}

// TestGinCleanerStopsOnClose: Close ends the cleaner, also mid-wait.
func TestGinCleanerStopsOnClose(t *testing.T) {
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	db.gin.delay = time.Hour // parked in its delay when Close comes
	db.gin.wrote()
	done := make(chan struct{})
	go func() { db.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not stop the cleaner")
	}
}
