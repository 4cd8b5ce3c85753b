package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"svc/storage"
)

func singleCreateTx(t *testing.T, id [16]byte, doc string) *storage.Tx {
	t.Helper()
	return &storage.Tx{Tenant: "gc", ID: uuid.Must(uuid.NewRandom()), User: "u",
		Writes: []storage.Write{{ID: id, Model: storage.ModelKey{Name: "m", Version: 1}, State: "CREATED", Data: []byte(doc), Transition: "t"}},
		Audit:  []storage.AuditEvent{{EntityID: id, Kind: "EntityChange", Type: "CREATE", State: "CREATED", Data: []byte(doc)}}}
}

// TestGroupCommitIsolatesAFailingCreate: one create of a batch fails (its
// id exists); it alone gets the error and the others are committed.
func TestGroupCommitIsolatesAFailingCreate(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	es := db.Entities()
	taken := uuid.Must(uuid.NewRandom())
	if _, err := es.Commit(ctx, singleCreateTx(t, taken, `{"n":0}`)); err != nil {
		t.Fatal(err)
	}
	var batch []*groupEntry
	ids := make([][16]byte, 6)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewRandom())
		if i == 2 || i == 5 {
			ids[i] = taken
		}
		sql, args, _, ok := singleCreate(singleCreateTx(t, ids[i], fmt.Sprintf(`{"n":%d}`, i+1)))
		if !ok {
			t.Fatal("not a single create")
		}
		batch = append(batch, &groupEntry{sql: sql, args: args})
	}
	db.creates.write(ctx, batch)
	for i, e := range batch {
		if i == 2 || i == 5 {
			if !errors.Is(mapErr(e.err), storage.ErrExists) {
				t.Errorf("create %d (duplicate id): %v, want ErrExists", i, e.err)
			}
			continue
		}
		if e.err != nil {
			t.Errorf("create %d failed with its batch: %v", i, e.err)
			continue
		}
		got, err := es.Get(ctx, "gc", ids[i])
		if err != nil || string(got.Data) != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Errorf("create %d: %+v %v", i, got, err)
		}
	}
	if got, _ := es.Get(ctx, "gc", taken); got == nil || string(got.Data) != `{"n":0}` {
		t.Errorf("the existing entity changed: %+v", got)
	}
	// The connection the failed batch used went back to the pool usable.
	for i := 0; i < 8; i++ {
		if _, err := es.Commit(ctx, singleCreateTx(t, uuid.Must(uuid.NewRandom()), `{}`)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupCommitConcurrentCreates: concurrent single creates share
// transactions, every one is readable once acknowledged, and a duplicate
// among them fails alone.
func TestGroupCommitConcurrentCreates(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	es := db.Entities()
	taken := uuid.Must(uuid.NewRandom())
	if _, err := es.Commit(ctx, singleCreateTx(t, taken, `{}`)); err != nil {
		t.Fatal(err)
	}
	b0, n0 := db.creates.batches.Load(), db.creates.entries.Load()
	const workers, each = 32, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := uuid.Must(uuid.NewRandom())
				dup := w == 3 && i == 7
				if dup {
					id = taken
				}
				_, err := es.Commit(ctx, singleCreateTx(t, id, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
				switch {
				case dup && !errors.Is(err, storage.ErrExists):
					errs <- fmt.Errorf("duplicate: %v", err)
				case !dup && err != nil:
					errs <- err
				case !dup:
					if got, err := es.Get(ctx, "gc", id); err != nil || string(got.Data) != fmt.Sprintf(`{"w":%d,"i":%d}`, w, i) {
						errs <- fmt.Errorf("acknowledged create %d/%d not readable: %v", w, i, err)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	batches, entries := db.creates.batches.Load()-b0, db.creates.entries.Load()-n0
	if entries < workers*each {
		t.Fatalf("%d creates went through group commit, want %d", entries, workers*each)
	}
	if batches >= entries {
		t.Errorf("%d batches for %d concurrent creates: none shared a transaction", batches, entries)
	}
	t.Logf("%d creates in %d batches", entries, batches)
}
