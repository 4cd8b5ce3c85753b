package sqlite

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

// The point reads through SQLite's C interface return what database/sql
// and the driver read from the same row: every field, a document that is
// empty but present, a long tenant (a bind buffer larger than the first),
// a revision as at a time and by transaction, and a tombstone as not found.
// After Close a read fails instead of touching freed connections.
func TestPointReadMatchesDriver(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	via := func(q string, args ...any) *storage.Entity {
		t.Helper()
		e, err := scanRevision(db.queryRow(ctx, `SELECT `+revCols+` FROM revisions WHERE `+q, args...).r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	long := string(make([]byte, 300)) + "tenant"
	type ent struct {
		tenant string
		id     [16]byte
		data   []byte
	}
	ents := []ent{{"t1", uuid.Must(uuid.NewUUID()), []byte(`{"a":1}`)}, {"t1", uuid.Must(uuid.NewUUID()), []byte{}},
		{long, uuid.Must(uuid.NewUUID()), []byte(`{"b":"ü"}`)}}
	var txs [][16]byte
	for _, x := range ents {
		tx := &storage.Tx{Tenant: x.tenant, ID: uuid.Must(uuid.NewUUID()), User: "user-1",
			Writes: []storage.Write{{ID: x.id, Model: order, State: "NEW", Data: x.data}}}
		if _, err := db.Entities().Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx.ID)
	}
	mid := time.Now()
	upd := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "user-2",
		Writes: []storage.Write{{ID: ents[0].id, Model: order, State: "PAID", Data: []byte(`{"a":2}`), Transition: "pay", ExpectVersion: 1}}}
	if _, err := db.Entities().Commit(ctx, upd); err != nil {
		t.Fatal(err)
	}
	for i, x := range ents {
		got, err := db.Entities().Get(ctx, x.tenant, x.id)
		if err != nil {
			t.Fatal(err)
		}
		want := via(`id = ? AND tenant = ? ORDER BY version DESC LIMIT 1`, x.id[:], x.tenant)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("get %d:\n got %+v\nwant %+v", i, got, want)
		}
		if got.Data == nil {
			t.Fatalf("get %d: nil document", i)
		}
		at, err := db.Entities().GetAt(ctx, x.tenant, x.id, mid)
		if err != nil {
			t.Fatal(err)
		}
		if want := via(`id = ? AND tenant = ? AND version = 1`, x.id[:], x.tenant); !reflect.DeepEqual(at, want) {
			t.Fatalf("get at %d:\n got %+v\nwant %+v", i, at, want)
		}
		byTx, err := db.Entities().GetByTx(ctx, x.tenant, x.id, txs[i])
		if err != nil || !reflect.DeepEqual(byTx, at) {
			t.Fatalf("get by tx %d: %+v, %v", i, byTx, err)
		}
	}
	if got, err := db.Entities().Get(ctx, "t1", ents[0].id); err != nil || got.Version != 2 || got.State != "PAID" || got.Transition != "pay" || got.User != "user-2" {
		t.Fatalf("get after update: %+v, %v", got, err)
	}
	if _, err := db.Entities().Get(ctx, "t2", ents[0].id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant: %v", err)
	}
	del := &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: ents[1].id, Model: order, Delete: true, ExpectVersion: 1}}}
	if _, err := db.Entities().Commit(ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Entities().Get(ctx, "t1", ents[1].id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	db.Close()
	if _, err := db.Entities().Get(ctx, "t1", ents[0].id); err == nil {
		t.Fatal("get after close succeeded")
	}
}
