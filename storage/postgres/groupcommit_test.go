package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/internal/await"
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
		tx := singleCreateTx(t, ids[i], fmt.Sprintf(`{"n":%d}`, i+1))
		sql, args, now, ok := singleCreate(tx)
		if !ok {
			t.Fatal("not a single create")
		}
		batch = append(batch, &groupEntry{tx: tx, now: now, sql: sql, args: args})
	}
	many := db.creates.many.Load()
	db.creates.write(ctx, batch)
	if db.creates.many.Load() != many {
		t.Fatal("a batch holding a duplicate counted as written in one statement")
	}
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

// TestGroupCommitOneStatementBatch: a batch without failures is written as
// one statement, with the rows each create's own statement writes.
func TestGroupCommitOneStatementBatch(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	es := db.Entities()
	var batch []*groupEntry
	var txs []*storage.Tx
	for i := 0; i < 5; i++ {
		tx := singleCreateTx(t, uuid.Must(uuid.NewRandom()), fmt.Sprintf(`{"n":%d,"q":"a\"b"}`, i))
		tx.Tenant = fmt.Sprintf("gc%d", i%2)
		tx.Attribution = &storage.Attribution{UserKind: "user", ExecID: fmt.Sprintf("x%d", i), ExecKind: "k"}
		if i == 3 {
			tx.Audit = append(tx.Audit, storage.AuditEvent{EntityID: tx.Writes[0].ID, Kind: "StateMachine", Type: "STATE_MACHINE_FINISH", Details: "d", TxID: uuid.Must(uuid.NewRandom()), Time: time.Unix(0, 42)})
		}
		tx.AuditSeq = i
		sql, args, now, _ := singleCreate(tx)
		batch = append(batch, &groupEntry{tx: tx, now: now, sql: sql, args: args})
		txs = append(txs, tx)
	}
	many := db.creates.many.Load()
	db.creates.write(ctx, batch)
	if db.creates.many.Load() != many+1 {
		t.Fatal("the batch was not written as one statement")
	}
	for i, e := range batch {
		if e.err != nil {
			t.Fatalf("create %d: %v", i, e.err)
		}
	}
	// The same creates through their own statements, into a second
	// database state, must give the same rows.
	rows := func(q string, args ...any) [][]any {
		r, err := db.pool.Query(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out [][]any
		for r.Next() {
			v, _ := r.Values()
			out = append(out, v)
		}
		return out
	}
	const ent = `SELECT tenant, model_name, model_version, state, version, tx_id, transition, created_ns, updated_ns, doc FROM entities WHERE id = $1`
	const rev = `SELECT tenant, version, model_name, model_version, state, change_type, tx_id, transition, user_id, created_ns, at_ns, data, user_kind, exec_id, exec_kind FROM entity_revisions WHERE id = $1`
	const aud = `SELECT tenant, tx_id, seq, at_ns, kind, event_type, state, user_id, details, data FROM audit_events WHERE entity_id = $1 ORDER BY seq`
	var first [][][]any
	for _, tx := range txs {
		id := tx.Writes[0].ID
		first = append(first, rows(ent, id), rows(rev, id), rows(aud, id))
		if _, err := db.pool.Exec(ctx, `DELETE FROM entities WHERE id = $1; `, id); err != nil {
			t.Fatal(err)
		}
		db.pool.Exec(ctx, `DELETE FROM entity_revisions WHERE id = $1`, id)
		db.pool.Exec(ctx, `DELETE FROM audit_events WHERE entity_id = $1`, id)
	}
	for i, e := range batch {
		if _, err := db.pool.Exec(ctx, e.sql, e.args...); err != nil {
			t.Fatalf("create %d alone: %v", i, err)
		}
	}
	for i, tx := range txs {
		id := tx.Writes[0].ID
		again := [][][]any{rows(ent, id), rows(rev, id), rows(aud, id)}
		if fmt.Sprint(again) != fmt.Sprint(first[3*i:3*i+3]) || len(again[0]) != 1 || len(again[2]) == 0 {
			t.Fatalf("create %d:\none statement: %v\nits own:       %v", i, first[3*i:3*i+3], again)
		}
	}
	if got, err := es.Get(ctx, "gc1", txs[1].Writes[0].ID); err != nil || string(got.Data) != string(txs[1].Writes[0].Data) {
		t.Fatalf("get: %+v %v", got, err)
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

// TestGroupCommitWritesCreateEvents: a single create of a watched model
// (its one CREATE change, with or without the body) is one statement and
// goes through group commit, its event written by that statement; in a
// batch where one create fails (its id exists) that create has no event
// and every other has its own, with the create's fields.
func TestGroupCommitWritesCreateEvents(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	es, log := db.Entities(), db.Changes()
	withEvent := func(tx *storage.Tx, body bool) *storage.Tx {
		w := &tx.Writes[0]
		c := storage.Change{EntityID: w.ID, Model: w.Model, Kind: storage.KindCreate, ToState: w.State, Transition: w.Transition}
		if body {
			c.BodyAfter = w.Data
		}
		tx.Changes = []storage.Change{c}
		return tx
	}
	head, err := log.ChangeHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	taken := uuid.Must(uuid.NewRandom())
	if _, err := es.Commit(ctx, withEvent(singleCreateTx(t, taken, `{"n":0}`), true)); err != nil {
		t.Fatal(err)
	}
	var batch []*groupEntry
	ids := make([][16]byte, 4)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewRandom())
		if i == 2 {
			ids[i] = taken
		}
		tx := withEvent(singleCreateTx(t, ids[i], fmt.Sprintf(`{"n":%d}`, i+1)), i%2 == 0)
		sql, args, now, ok := singleCreate(tx)
		if !ok {
			t.Fatal("a create with its event is not a single create")
		}
		batch = append(batch, &groupEntry{tx: tx, now: now, sql: sql, args: args})
	}
	db.creates.write(ctx, batch)
	for i, e := range batch {
		if (i == 2) != (e.err != nil) {
			t.Fatalf("create %d: %v", i, e.err)
		}
	}
	m := storage.ModelKey{Name: "m", Version: 1}
	var evs []storage.ChangeEvent
	await.Until(t, await.Long, func() bool {
		evs, err = log.ReadChanges(ctx, storage.ChangeQuery{Tenant: "gc", Model: &m, After: head, Limit: 100})
		return err == nil && len(evs) >= 4
	}, "4 events readable")
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4 (the first create and three of the batch)", len(evs))
	}
	want := map[[16]byte]int{taken: 0, ids[0]: 1, ids[1]: 2, ids[3]: 4}
	for _, ev := range evs {
		n, ok := want[ev.EntityID]
		if !ok {
			t.Fatalf("event of %x, which no committed create wrote", ev.EntityID)
		}
		delete(want, ev.EntityID)
		if ev.Kind != storage.KindCreate || ev.FromState != "" || ev.ToState != "CREATED" || ev.Transition != "t" || ev.BodyBefore != nil {
			t.Fatalf("event %+v", ev)
		}
		if wantBody := n == 0 || (n-1)%2 == 0; wantBody != (ev.BodyAfter != nil) ||
			(wantBody && string(ev.BodyAfter) != fmt.Sprintf(`{"n":%d}`, n)) {
			t.Fatalf("create %d: body after %q", n, ev.BodyAfter)
		}
	}
	// A change that is not the write's plain CREATE keeps its own
	// transaction.
	tx := withEvent(singleCreateTx(t, uuid.Must(uuid.NewRandom()), `{}`), false)
	tx.Changes[0].ToState = "OTHER"
	if _, _, _, ok := singleCreate(tx); ok {
		t.Fatal("a change unlike the create went the single-statement way")
	}
}
