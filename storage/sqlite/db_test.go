package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/bench/orderdoc"
	"svc/internal/await"
	"svc/predicate"
	"svc/storage"
)

var order = storage.ModelKey{Name: "order", Version: 1}

func createTx(data string) *storage.Tx {
	return &storage.Tx{Tenant: "t1", ID: uuid.Must(uuid.NewUUID()), User: "u",
		Writes: []storage.Write{{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "NEW", Data: []byte(data)}}}
}

// A second engine on the same file is refused at open, naming the file;
// after the first closes, the file opens again.
func TestSecondProcessRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "svc.db")
	db, err := Open(context.Background(), testOptions(path))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), testOptions(path))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second open: %v", err)
	}
	db.Close()
	db2, err := Open(context.Background(), testOptions(path))
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	db2.Close()
}

// SVC_SQLITE_AUTO_MIGRATE=false refuses a file that lacks migrations (a new
// file lacks them all) and says what to set; a file from a newer svc is
// refused either way.
func TestSQLiteAutoMigrateOff(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "svc.db")
	o := testOptions(path)
	o.AutoMigrate = false
	_, err := Open(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "SVC_SQLITE_AUTO_MIGRATE") {
		t.Fatalf("open without migrations: %v", err)
	}
	o.AutoMigrate = true
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Entities().Commit(context.Background(), createTx(`{}`)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	o.AutoMigrate = false
	db, err = Open(context.Background(), o)
	if err != nil {
		t.Fatalf("migrated file refused without auto-migrate: %v", err)
	}
	if _, err := db.w.conn.ExecContext(context.Background(), "PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), testOptions(path)); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer file: %v", err)
	}
}

// SVC_SQLITE_CACHE_SIZE sets every connection's page cache.
func TestCacheSizeApplied(t *testing.T) {
	t.Parallel()
	o := testOptions(filepath.Join(t.TempDir(), "svc.db"))
	o.CacheSizeKiB = 1234
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var w, r int
	if err := db.w.conn.QueryRowContext(context.Background(), "PRAGMA cache_size").Scan(&w); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow("PRAGMA cache_size").Scan(&r); err != nil {
		t.Fatal(err)
	}
	if w != -1234 || r != -1234 {
		t.Fatalf("cache_size writer %d reader %d, want -1234 (KiB)", w, r)
	}
}

// SVC_SQLITE_BUSY_TIMEOUT: while another process holds the write lock, a
// write waits that long and then answers ErrUnavailable (503, retryable);
// with a longer timeout it waits and commits once the lock is released.
func TestBusyTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "svc.db")
	o := testOptions(path)
	o.BusyTimeout = 200 * time.Millisecond
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	oc, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	if _, err := oc.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = db.Entities().Commit(context.Background(), createTx(`{}`))
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("write under another's lock: %v", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Fatalf("gave up after %v, before the busy timeout", waited)
	}
	db.Close()

	o.BusyTimeout = time.Minute
	db, err = Open(context.Background(), o)
	if err == nil {
		defer db.Close()
		done := make(chan error, 1)
		go func() {
			_, err := db.Entities().Commit(context.Background(), createTx(`{}`))
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("write did not wait for the lock: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if _, err := oc.ExecContext(context.Background(), "COMMIT"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("write after the lock was released: %v", err)
		}
	} else {
		t.Fatal(err)
	}
}

// SVC_SQLITE_SEARCH_SCAN_LIMIT bounds a direct search's rows (ErrScanBudget
// past it); an async snapshot (SearchIDs) is not bounded.
func TestSearchScanLimit(t *testing.T) {
	t.Parallel()
	o := testOptions(filepath.Join(t.TempDir(), "svc.db"))
	o.SearchScanLimit = 5
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := db.Entities().Commit(ctx, createTx(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	q := &storage.SearchQuery{Tenant: "t1", Model: order}
	if es, err := db.Search().Search(ctx, q); err != nil || len(es) != 5 {
		t.Fatalf("at the limit: %d %v", len(es), err)
	}
	if _, err := db.Entities().Commit(ctx, createTx(`{"i":5}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Search().Search(ctx, q); !errors.Is(err, storage.ErrScanBudget) {
		t.Fatalf("past the limit: %v", err)
	}
	if ids, err := db.Search().SearchIDs(ctx, q); err != nil || len(ids) != 6 {
		t.Fatalf("async snapshot: %d %v", len(ids), err)
	}
	o.SearchScanLimit = 0
	db.opt.SearchScanLimit = 0
	if es, err := db.Search().Search(ctx, q); err != nil || len(es) != 6 {
		t.Fatalf("unlimited: %d %v", len(es), err)
	}
}

// Search evaluates the condition on the stored documents and meta fields.
func TestSearchMatches(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if _, err := db.Entities().Commit(ctx, createTx(fmt.Sprintf(`{"i":%d,"even":%v}`, i, i%2 == 0))); err != nil {
			t.Fatal(err)
		}
	}
	expr, err := predicate.Parse([]byte(`{"type":"simple","jsonPath":"$.even","operatorType":"EQUALS","value":true}`))
	if err != nil {
		t.Fatal(err)
	}
	cond, err := expr.Compile(nil)
	if err != nil {
		t.Skipf("condition needs a field map here: %v", err)
	}
	es, err := db.Search().Search(ctx, &storage.SearchQuery{Tenant: "t1", Model: order, Cond: cond})
	if err != nil || len(es) != 5 {
		t.Fatalf("matches: %d %v", len(es), err)
	}
}

// Concurrent writes share transactions: writes queued while a group is
// being written go out together in the next one, and one failing write in
// a group fails alone.
func TestGroupCommitSharesTransactions(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	dup := createTx(`{"dup":1}`)
	if _, err := db.Entities().Commit(ctx, dup); err != nil {
		t.Fatal(err)
	}
	release, reached := make(chan struct{}), make(chan struct{})
	blocked := storage.WithFault(ctx, func(step string) error {
		if step == "validated" {
			close(reached)
			<-release
		}
		return nil
	})
	first := make(chan error, 1)
	go func() {
		_, err := db.Entities().Commit(blocked, createTx(`{"first":1}`))
		first <- err
	}()
	// Wait until the first write is inside its group's transaction: the
	// writes below then all queue behind it.
	<-reached
	groupsBefore := db.w.groups.Load()
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tx := createTx(fmt.Sprintf(`{"n":%d}`, i))
			if i == 7 {
				tx.Writes[0].ID = dup.Writes[0].ID // taken: fails alone
			}
			_, errs[i] = db.Entities().Commit(ctx, tx)
		}(i)
	}
	await.Until(t, await.Long, func() bool { db.w.mu.Lock(); defer db.w.mu.Unlock(); return len(db.w.queue) == n }, "writer queue length")
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if i == 7 {
			if !errors.Is(err, storage.ErrExists) {
				t.Errorf("duplicate in a group: %v", err)
			}
		} else if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	groups := db.w.groups.Load() - groupsBefore
	if groups != 2 {
		t.Errorf("%d groups for the blocked write and %d queued ones, want 2", groups, n)
	}
	if c, _ := db.Entities().Count(ctx, "t1", order); c != n+1 {
		t.Errorf("count %d, want %d", c, n+1)
	}
}

// TestOutboxMovedOntoRevisions: migration 0006 moves the outbox's events
// onto the revisions they recorded and moves each subscription's cursor
// with them: an upgraded file reads the same events (kinds, states,
// transitions, bodies), a subscription resumes at its first unread event,
// one that had read everything sees only what comes after, and the
// outbox's cursors, {0, seq}, all come before the new ones.
func TestOutboxMovedOntoRevisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version > 5 {
			break
		}
		if _, err := raw.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	a, b, c := uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID())
	tx1, tx2, tx3, tx4 := uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID())
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	rev := func(id uuid.UUID, v int, state string, change int, tx uuid.UUID, tr string, at int64, data string) {
		exec(`INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id, created_ns,
			at_ns, trio, data) VALUES (?, 't', ?, 'order', 1, ?, ?, ?, ?, 'u', 1, ?, 0, ?)`, id[:], v, state, change, tx[:], tr, at, []byte(data))
	}
	ev := func(id uuid.UUID, tx uuid.UUID, kind, from, to, tr string, at int64, before, after any) {
		exec(`INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition,
			emitted_ns, body_before, body_after) VALUES ('t', 'order', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id[:], tx[:], kind, from, to, tr, at, before, after)
	}
	rev(a, 1, "NEW", 0, tx1, "create", 1, `{"a":1}`)
	ev(a, tx1, "CREATE", "", "NEW", "create", 1, nil, []byte(`{"a":1}`))
	rev(c, 1, "NEW", 0, tx4, "create", 2, `{"c":1}`) // unwatched: no event
	rev(a, 2, "PAID", 1, tx2, "pay", 3, `{"a":2}`)
	ev(a, tx2, "UPDATE", "NEW", "PAID", "pay", 3, []byte(`{"a":1}`), []byte(`{"a":2}`))
	rev(b, 1, "NEW", 0, tx3, "create", 4, `{"b":1}`)
	ev(b, tx3, "CREATE", "", "NEW", "create", 4, nil, nil)
	for _, s := range []struct {
		id string
		lo int
	}{{"s0", 0}, {"s1", 1}, {"s3", 3}} {
		exec(`INSERT INTO subscriptions (tenant, id, model_name, model_version, include_body, spec, cursor_hi, cursor_lo, created_ns, attached_ns)
			VALUES ('t', ?, 'order', 1, 'NONE', x'', 0, ?, 1, 1)`, s.id, s.lo)
	}
	exec(`PRAGMA user_version = 5`)
	raw.Close()

	db, err := Open(ctx, testOptions(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func(after storage.ChangeCursor) []storage.ChangeEvent {
		t.Helper()
		evs, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: "t", Model: &order, After: after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	cursor := func(id string) storage.ChangeCursor {
		t.Helper()
		s, err := db.Subscriptions().GetSubscription(ctx, "t", id)
		if err != nil {
			t.Fatal(err)
		}
		return s.Cursor
	}
	all := read(storage.ChangeCursor{})
	if len(all) != 3 {
		t.Fatalf("%d events after the migration, want 3: %+v", len(all), all)
	}
	want := []struct {
		id, tx             uuid.UUID
		kind, from, to, tr string
		before, after      any
	}{
		{a, tx1, storage.KindCreate, "", "NEW", "create", nil, `{"a":1}`},
		{a, tx2, storage.KindUpdate, "NEW", "PAID", "pay", `{"a":1}`, `{"a":2}`},
		{b, tx3, storage.KindCreate, "", "NEW", "create", nil, nil},
	}
	body := func(b []byte) any {
		if b == nil {
			return nil
		}
		return string(b)
	}
	for i, w := range want {
		e := all[i]
		if e.EntityID != w.id || e.TxID != w.tx || e.Kind != w.kind || e.FromState != w.from || e.ToState != w.to || e.Transition != w.tr ||
			body(e.BodyBefore) != w.before || body(e.BodyAfter) != w.after || e.Cursor.Hi != 1 {
			t.Fatalf("event %d: %+v (before %q after %q)", i, e, e.BodyBefore, e.BodyAfter)
		}
	}
	if got := read(cursor("s0")); len(got) != 3 {
		t.Fatalf("a subscription that had read nothing reads %d events", len(got))
	}
	if got := read(cursor("s1")); len(got) != 2 || got[0].TxID != tx2 || got[1].TxID != tx3 {
		t.Fatalf("a subscription that had read the first event reads %+v", got)
	}
	if got := read(cursor("s3")); len(got) != 0 {
		t.Fatalf("a subscription that had read everything reads %+v", got)
	}
	head, err := db.Changes().ChangeHead(ctx)
	if err != nil || head.Less(all[2].Cursor) || !(storage.ChangeCursor{Lo: 1 << 40}).Less(head) {
		t.Fatalf("head %v: behind %v or not after every outbox cursor (%v)", head, all[2].Cursor, err)
	}
	tx := createTx(`{}`)
	tx.Tenant = "t"
	tx.Changes = []storage.Change{{EntityID: tx.Writes[0].ID, Model: tx.Writes[0].Model, Kind: storage.KindCreate, ToState: "NEW"}}
	if _, err := db.Entities().Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if got := read(cursor("s3")); len(got) != 1 || got[0].TxID != tx.ID || !head.Less(got[0].Cursor) {
		t.Fatalf("after a new event, a subscription at the end reads %+v", got)
	}
}

// TestEventOfSeveralWritesOfOneEntity: an entity written more than once in
// one commit has one event, on its last revision: the kind of its first
// write (a delete's last), the transition of its first write, the state
// before the commit and after its last write (a delete ends in the state
// it had), and the body before the commit, not the one between.
func TestEventOfSeveralWritesOfOneEntity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	tn := fmt.Sprintf("w-%x", uuid.Must(uuid.NewUUID()))
	head, err := db.Changes().ChangeHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(ws []storage.Write, cs ...storage.Change) [16]byte {
		t.Helper()
		tx := &storage.Tx{Tenant: tn, ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: ws, Changes: cs}
		if _, err := db.Entities().Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		return tx.ID
	}
	id, other := uuid.Must(uuid.NewUUID()), uuid.Must(uuid.NewUUID())
	// Created beside an unwatched entity, then updated: two commits.
	txA := commit([]storage.Write{
		{ID: id, Model: order, State: "NEW", Data: []byte(`{"v":1}`), Transition: "create"},
		{ID: other, Model: order, State: "X", Data: []byte(`{}`)},
	}, storage.Change{EntityID: id, Model: order, Kind: storage.KindCreate, ToState: "NEW", Transition: "create", BodyAfter: []byte(`{"v":1}`), WantBefore: true})
	txA2 := commit([]storage.Write{
		{ID: id, Model: order, State: "OPEN", Data: []byte(`{"v":2}`), Transition: "open", ExpectVersion: 1},
	}, storage.Change{EntityID: id, Model: order, Kind: storage.KindUpdate, ToState: "OPEN", Transition: "open"})
	// Updated twice (each write expects the version before the commit):
	// the body before is version 2's.
	txB := commit([]storage.Write{
		{ID: id, Model: order, State: "PAID", Data: []byte(`{"v":3}`), Transition: "pay", ExpectVersion: 2},
		{ID: id, Model: order, State: "SHIPPED", Data: []byte(`{"v":4}`), Transition: "ship", ExpectVersion: 2},
	}, storage.Change{EntityID: id, Model: order, Kind: storage.KindUpdate, ToState: "SHIPPED", Transition: "pay", BodyAfter: []byte(`{"v":4}`), WantBefore: true})
	// Updated then deleted: a DELETE from and to the state before.
	txC := commit([]storage.Write{
		{ID: id, Model: order, State: "DONE", Data: []byte(`{"v":5}`), Transition: "done", ExpectVersion: 4},
		{ID: id, Model: order, Delete: true, ExpectVersion: 4},
	}, storage.Change{EntityID: id, Model: order, Kind: storage.KindDelete, Transition: "done", WantBefore: true})
	evs, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: tn, Model: &order, After: head, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tx                 [16]byte
		kind, from, to, tr string
		before, after      string
	}{
		{txA, storage.KindCreate, "", "NEW", "create", "", `{"v":1}`},
		{txA2, storage.KindUpdate, "NEW", "OPEN", "open", "", ""},
		{txB, storage.KindUpdate, "OPEN", "SHIPPED", "pay", `{"v":2}`, `{"v":4}`},
		{txC, storage.KindDelete, "SHIPPED", "SHIPPED", "done", `{"v":4}`, ""},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, w := range want {
		e := evs[i]
		if e.TxID != w.tx || e.EntityID != id || e.Kind != w.kind || e.FromState != w.from || e.ToState != w.to || e.Transition != w.tr ||
			string(e.BodyBefore) != w.before || string(e.BodyAfter) != w.after {
			t.Fatalf("event %d: %+v (before %q after %q)", i, e, e.BodyBefore, e.BodyAfter)
		}
	}
}

// TestCollectionCreateRecordsAnEventEach: a transaction of many creates
// is written many rows to a statement (creates.go); on a watched model each
// row carries its event, with its own body, and a run with events is not
// mixed with one without (here the second model is unwatched).
func TestCollectionCreateRecordsAnEventEach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	tn := fmt.Sprintf("c-%x", uuid.Must(uuid.NewUUID()))
	head, err := db.Changes().ChangeHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unwatched := storage.ModelKey{Name: "other", Version: 1}
	tx := &storage.Tx{Tenant: tn, ID: uuid.Must(uuid.NewUUID()), User: "u"}
	const n = 70 // chunks of 64, 4, 1 and 1
	bodies := map[[16]byte]string{}
	for i := range n + 5 {
		w := storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "NEW", Data: []byte(fmt.Sprintf(`{"i":%d}`, i))}
		if i%15 == 7 {
			w.Model = unwatched
		} else {
			bodies[w.ID] = string(w.Data)
			tx.Changes = append(tx.Changes, storage.Change{EntityID: w.ID, Model: order, Kind: storage.KindCreate, ToState: "NEW", BodyAfter: w.Data})
		}
		tx.Writes = append(tx.Writes, w)
	}
	if _, err := db.Entities().Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: tn, After: head, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(bodies) {
		t.Fatalf("%d events for %d watched creates", len(evs), len(bodies))
	}
	for _, e := range evs {
		if want, ok := bodies[e.EntityID]; !ok || string(e.BodyAfter) != want || e.Kind != storage.KindCreate || e.TxID != tx.ID || e.Model != order {
			t.Fatalf("event %+v (body %q)", e, e.BodyAfter)
		}
		delete(bodies, e.EntityID)
	}
}

// TestCheckpointBoundsWAL: with checkpoints off the writer (checkpoint.go)
// the WAL still stays bounded under sustained writes: the checkpointer
// runs, and the writer's own checkpoint past ckptHard lets it restart.
func TestCheckpointBoundsWAL(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	if db.w.ck == nil {
		t.Skip("no C path: SQLite's automatic checkpoint is on")
	}
	// Lowered thresholds (the writer has not run since Open: no race), so
	// ~40 MB of documents are many times the bound.
	db.w.ck.soft, db.w.ck.hard = 100, 400
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		tx := &storage.Tx{Tenant: "t", ID: uuid.Must(uuid.NewUUID()), User: "u", Writes: make([]storage.Write, 500)}
		for j := range tx.Writes {
			tx.Writes[j] = storage.Write{ID: uuid.Must(uuid.NewUUID()), Model: order, State: "CREATED", Data: orderdoc.Append(nil, i*500+j)}
		}
		if _, err := db.Entities().Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(db.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// The hard bound, plus what one transaction (~1 MB) and one
	// checkpoint running beside the writer can add: far below the ~40 MB
	// written.
	if limit := int64(8 << 20); st.Size() > limit {
		t.Errorf("WAL is %d bytes after sustained writes, want at most %d", st.Size(), limit)
	}
	t.Logf("WAL %d bytes, %d checkpoints beside the writer, %d by it", st.Size(), db.w.ck.runs.Load(), db.w.ck.inline.Load())
	if db.w.ck.runs.Load()+db.w.ck.inline.Load() == 0 {
		t.Error("no checkpoint ran")
	}
}
