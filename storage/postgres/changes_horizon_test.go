package postgres

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/storage"
)

func TestWidenXid(t *testing.T) {
	const epoch = int64(1) << 32
	for _, c := range []struct {
		name     string
		ref, x32 int64
		want     int64
	}{
		{"same", 1000, 1000, 1000},
		{"below", 1000, 990, 990},
		// A running transaction that took its xid after the latest
		// completed one is above the snapshot's xmax.
		{"above", 1000, 1003, 1003},
		{"above, next epoch", 3*epoch + 5, 7, 3*epoch + 7},
		{"below, previous epoch", 3*epoch + 5, epoch - 2, 3*epoch - 2},
		{"above, across the epoch", 3*epoch - 2, 4, 3*epoch + 4},
	} {
		if got := widenXid(c.ref, c.x32); got != c.want {
			t.Errorf("%s: widenXid(%d, %d) = %d, want %d", c.name, c.ref, c.x32, got, c.want)
		}
	}
}

// TestChangesHoldBackRunningXidAboveXmax builds the state in which a feed
// read used to skip an event for good: transaction 1 holds an xid and is
// still running; transaction 2, younger, writes an event and commits;
// transactions 3 and 4 take xids at and above the snapshot's xmax and
// keep running (the xid above xmax is what the old horizon misread).
// The read must not return transaction 2's event while transaction 1 can
// still commit one below it, and must return both, in xid order, once
// transaction 1 has committed.
func TestChangesHoldBackRunningXidAboveXmax(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	tenant := "horizon-" + uuid.NewString()
	model := storage.ModelKey{Name: "order", Version: 1}
	insert := `INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition, emitted_ns)
		VALUES ($1, $2, $3, $4, $5, 'CREATE', '', 'NEW', '', 1)`

	t1, x1 := beginWithXid(t, db)
	e1, e2 := uuid.New(), uuid.New()
	if _, err := db.pool.Exec(ctx, insert, tenant, model.Name, model.Version, e2, uuid.New()); err != nil {
		t.Fatal(err)
	}
	// Transactions 3 and 4 take xids at and above the snapshot's xmax and
	// keep running. xmax is one past the latest completed xid of the whole
	// server, so a test in another package that commits an xid it took
	// after ours moves xmax past ours; the pair is then given back and
	// taken again until transaction 4's xid lies above xmax. (Two at a
	// time: the pool has four connections and the read needs one.)
	for try := 0; ; try++ {
		t3, _ := beginWithXid(t, db)
		t4, x4 := beginWithXid(t, db)
		var xmax int64
		if err := db.pool.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&xmax); err != nil {
			t.Fatal(err)
		}
		if x4 > xmax {
			break
		}
		if try == 50 {
			t.Fatalf("set-up: in %d tries transaction 4's xid was never above xmax (last %d, xmax %d); the state under test was not reached", try+1, x4, xmax)
		}
		_ = t4.Rollback(ctx)
		_ = t3.Rollback(ctx)
	}

	read := func() []storage.ChangeEvent {
		t.Helper()
		evs, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: tenant, Model: &model, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	if evs := read(); len(evs) != 0 {
		t.Fatalf("read %d events while transaction %d (older than the committed event) still runs; want none: "+
			"a cursor past them would skip what it commits", len(evs), x1)
	}

	if _, err := t1.Exec(ctx, insert, tenant, model.Name, model.Version, e1, uuid.New()); err != nil {
		t.Fatal(err)
	}
	if err := t1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	evs := read()
	if len(evs) != 2 || evs[0].EntityID != e1 || evs[1].EntityID != e2 {
		t.Fatalf("after both committed: got %d events %+v, want transaction 1's then transaction 2's", len(evs), evs)
	}
}

// beginWithXid starts a transaction that holds an xid until the test ends
// (or it commits) and returns the xid.
func beginWithXid(t *testing.T, db *DB) (pgx.Tx, int64) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	var x int64
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&x); err != nil {
		t.Fatal(err)
	}
	return tx, x
}
