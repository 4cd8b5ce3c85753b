package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

// A transaction of creates of several shapes (two models, two
// transitions, per-write attribution), interleaved with an update, is
// written in runs of many rows a statement: every entity reads back with
// its own model, state, transition, attribution and document.
func TestCreateRuns(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	other := storage.ModelKey{Name: "other", Version: 2}
	first := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "A", Data: []byte(`{"n":-1}`)}}}
	if _, err := db.Entities().Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u2"}
	for i := 0; i < 150; i++ {
		w := storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: order, State: fmt.Sprintf("S%d", i%3), Data: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		if i >= 70 && i < 90 {
			w.Model = other
		}
		if i%50 == 7 {
			w.Transition = "go"
		}
		if i == 100 {
			w.Attribution = &storage.Attribution{UserKind: "k", ExecID: "e", ExecKind: "x"}
		}
		tx.Writes = append(tx.Writes, w)
		if i == 120 {
			tx.Writes = append(tx.Writes, storage.Write{ID: first.Writes[0].ID, Model: order, State: "B", ExpectVersion: 1, Data: []byte(`{"n":-2}`)})
		}
	}
	if _, err := db.Entities().Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	for _, w := range tx.Writes {
		e, err := db.Entities().Get(ctx, "t", w.ID)
		if err != nil {
			t.Fatalf("%x: %v", w.ID, err)
		}
		if e.Model != w.Model || e.State != w.State || e.Transition != w.Transition || string(e.Data) != string(w.Data) ||
			e.User != "u2" || e.TxID != tx.ID || e.Version != w.ExpectVersion+1 {
			t.Fatalf("%x read back as %+v, written %+v", w.ID, e, w)
		}
		h, err := db.Entities().History(ctx, "t", w.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := h[len(h)-1].Attribution
		if (w.Attribution == nil) != (last == nil) || (last != nil && *last != *w.Attribution) {
			t.Fatalf("%x attribution %+v, written %+v", w.ID, last, w.Attribution)
		}
	}
	if n, err := db.Entities().Count(ctx, "t", other); err != nil || n != 20 {
		t.Fatalf("count of the other model: %d, %v", n, err)
	}
}

// A run of creates holding an id that exists fails with ErrExists and
// writes none of its entities.
func TestCreateRunExists(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	taken := uuid.Must(uuid.NewUUID())
	if _, err := db.Entities().Commit(ctx, &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: taken, Model: order, State: "A", Data: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u"}
	for i := 0; i < 100; i++ {
		id := uuid.Must(uuid.NewUUID())
		if i == 77 {
			id = taken
		}
		tx.Writes = append(tx.Writes, storage.Write{ID: id, Model: order, State: "A", Data: []byte(`{}`)})
	}
	if _, err := db.Entities().Commit(ctx, tx); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("commit with a taken id: %v, want ErrExists", err)
	}
	if n, err := db.Entities().Count(ctx, "t", order); err != nil || n != 1 {
		t.Fatalf("entities after the failed commit: %d, %v; want 1", n, err)
	}
}
