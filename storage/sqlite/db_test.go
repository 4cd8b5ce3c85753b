package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

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

// TestLeanOutboxMigrationKeepsTheHighWaterMark: a file whose outbox was
// emptied by pruning before migration 0005 kept its last sequence only in
// sqlite_sequence (AUTOINCREMENT); after the migration the head is still
// that sequence and the next event comes after it, so no stored cursor
// sees a sequence handed out twice.
func TestLeanOutboxMigrationKeepsTheHighWaterMark(t *testing.T) {
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
		if m.version > 4 {
			break
		}
		if _, err := raw.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	for range 3 {
		if _, err := raw.ExecContext(ctx, `INSERT INTO change_events (tenant, model_name, model_version, entity_id, tx_id, kind, from_state,
			to_state, transition, emitted_ns) VALUES ('t', 'm', 1, x'00', x'00', 'CREATE', '', 'S', '', 1)`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM change_events`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `PRAGMA user_version = 4`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err := Open(ctx, testOptions(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	head, err := db.Changes().ChangeHead(ctx)
	if err != nil || head.Lo != 3 {
		t.Fatalf("head after the migration %v, want 3: %v", head, err)
	}
	if got, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("the kept mark read as an event: %+v %v", got, err)
	}
	if got, err := db.Changes().ReadChanges(ctx, storage.ChangeQuery{Tenant: "t", Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("the kept mark read as a tenant's event: %+v %v", got, err)
	}
	tx := createTx(`{}`)
	tx.Changes = []storage.Change{{EntityID: tx.Writes[0].ID, Model: tx.Writes[0].Model, Kind: storage.KindCreate, ToState: "S"}}
	if _, err := db.Entities().Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if h, err := db.Changes().ChangeHead(ctx); err != nil || h.Lo != 4 {
		t.Fatalf("head after a new event %v, want 4: %v", h, err)
	}
}
