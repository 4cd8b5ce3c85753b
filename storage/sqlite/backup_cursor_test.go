package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

// TestBackupKeepsChangeCursors: a change event's cursor is its revision's
// rowid, so a durable subscriber's Last-Event-ID must mean the same event
// in a copy made by Backup (VACUUM INTO) as in the original, or a restore
// would skip or repeat events.
func TestBackupKeepsChangeCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, testOptions(filepath.Join(dir, "svc.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tn := fmt.Sprintf("b-%x", uuid.Must(uuid.NewUUID()))
	other := storage.ModelKey{Name: "other", Version: 1}
	head, err := db.Changes().ChangeHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 6 {
		tx := &storage.Tx{Tenant: tn, ID: uuid.Must(uuid.NewUUID()), User: "u"}
		for i := range 5 {
			w := storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "NEW", Data: []byte(fmt.Sprintf(`{"c":%d,"i":%d}`, c, i))}
			if i == 2 {
				w.Model = other // unwatched rows between watched ones
			} else {
				tx.Changes = append(tx.Changes, storage.Change{EntityID: w.ID, Model: order, Kind: storage.KindCreate, ToState: "NEW", BodyAfter: w.Data})
			}
			tx.Writes = append(tx.Writes, w)
		}
		if _, err := db.Entities().Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	read := func(d *DB, after storage.ChangeCursor) []storage.ChangeEvent {
		t.Helper()
		evs, err := d.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: tn, Model: &order, After: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	all := read(db, head)
	if len(all) != 24 {
		t.Fatalf("%d events for 24 watched creates", len(all))
	}
	mid := all[9].Cursor

	dst := filepath.Join(dir, "copy.db")
	if _, err := Backup(ctx, filepath.Join(dir, "svc.db"), dst, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(ctx, testOptions(dst))
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	got, want := read(cp, mid), all[10:]
	if len(got) != len(want) {
		t.Fatalf("after cursor %v the copy has %d events, the original %d", mid, len(got), len(want))
	}
	for i := range got {
		if got[i].Cursor != want[i].Cursor || got[i].EntityID != want[i].EntityID || string(got[i].BodyAfter) != string(want[i].BodyAfter) {
			t.Fatalf("event %d after cursor %v: copy %v %x, original %v %x", i, mid, got[i].Cursor, got[i].EntityID, want[i].Cursor, want[i].EntityID)
		}
	}
}
