// Package sqlitetest opens the SQLite engine on a fresh file for one test,
// as storage/postgres/pgtestdb does for PostgreSQL.
package sqlitetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"svc/storage/sqlite"
)

func options(path string) sqlite.Options {
	return sqlite.Options{Path: path, AutoMigrate: true,
		BusyTimeout: 5 * time.Second, CacheSizeKiB: 16000, SearchScanLimit: 100000}
}

var (
	migratedOnce sync.Once
	migrated     []byte // a freshly migrated, empty database file
)

// migratedFile is the file of an empty database with every migration
// applied, made once per test binary: applying the migrations is most of
// what opening a fresh engine costs under -race (SQLite parses each
// statement), and every test's file would hold the same bytes after it.
// Nil when it could not be made; Open then migrates as usual.
func migratedFile() []byte {
	migratedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sqlitetest")
		if err != nil {
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "svc.db")
		db, err := sqlite.Open(context.Background(), options(path))
		if err != nil {
			return
		}
		db.Close()
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
			return // not checkpointed into the main file: do not copy half
		}
		migrated, _ = os.ReadFile(path)
	})
	return migrated
}

// Open opens a fresh engine on a file in the test's temporary directory
// and closes it when the test ends. Each call has its own file, so tests
// that own their store may run in parallel. The file starts as a copy of
// an empty database migrated once per test binary; sqlite.Open still
// checks its schema version and applies whatever is missing.
func Open(t testing.TB) *sqlite.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "svc.db")
	if b := migratedFile(); b != nil {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sqlite.Open(context.Background(), options(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
