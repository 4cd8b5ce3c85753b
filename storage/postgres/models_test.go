package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/modelcache"
	"svc/storage/storagetest"
)

func TestModelsContract(t *testing.T) {
	db := openTest(t)
	storagetest.Models(t, func(t *testing.T) storage.Models {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE models"); err != nil {
			t.Fatal(err)
		}
		return db.Models()
	})
}

// TestModelCacheOverPostgres: the model cache svc serves from keeps the
// contract over this engine.
func TestModelCacheOverPostgres(t *testing.T) {
	db := openTest(t)
	storagetest.Models(t, func(t *testing.T) storage.Models {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE models"); err != nil {
			t.Fatal(err)
		}
		return modelcache.New(db.Models(), time.Minute)
	})
}

func TestMigrateIsIdempotentAndSerialised(t *testing.T) {
	db := openTest(t)
	n, err := db.Migrate(context.Background())
	if err != nil || n != 0 {
		t.Fatalf("second migrate applied %d: %v", n, err)
	}
	// Concurrent migrators queue on the advisory lock; none fails.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.Migrate(context.Background())
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestMigrateLockTimeout(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	holder, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", migrateLockKey)
	o := testOptions()
	o.AutoMigrate = false
	o.MigrateLockWait = 200 * time.Millisecond
	other, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	start := time.Now()
	if _, err := other.Migrate(ctx); err == nil {
		t.Fatal("migrate ran while another node held the lock")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("lock wait not bounded")
	}
}

func TestAcquireTimeoutIsUnavailable(t *testing.T) {
	o := testOptions()
	o.MaxConns, o.AcquireTimeout = 1, 100*time.Millisecond
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, err := db.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	_, err = db.Models().GetModel(context.Background(), "t", storage.ModelKey{Name: "x", Version: 1})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("exhausted pool: %v, want ErrUnavailable", err)
	}
}

func TestSessionTimeoutsApplied(t *testing.T) {
	db := openTest(t)
	var st, idle string
	db.pool.QueryRow(context.Background(), "SHOW statement_timeout").Scan(&st)
	db.pool.QueryRow(context.Background(), "SHOW idle_in_transaction_session_timeout").Scan(&idle)
	if st != "1min" || idle != "1min" {
		t.Fatalf("statement_timeout %q idle_in_transaction_session_timeout %q", st, idle)
	}
}

func TestBadURLDoesNotLeakIt(t *testing.T) {
	_, err := Open(context.Background(), Options{URL: "postgres://user:hunter2@[bad"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v", err)
	}
}

// TestDocIndexPendingListIsBounded: the entity document GIN's pending
// list is bounded at 1 MB (migration 0019), so an insert that has to merge
// it never merges more (the create latency tail of issue 14).
func TestDocIndexPendingListIsBounded(t *testing.T) {
	db := openTest(t)
	var opts []string
	if err := db.pool.QueryRow(context.Background(),
		`SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = 'entities_doc'`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range opts {
		found = found || o == "gin_pending_list_limit=1024"
	}
	if !found {
		t.Fatalf("entities_doc options %v, want gin_pending_list_limit=1024", opts)
	}
}
