// Package sqlitetest opens the SQLite engine on a fresh file for one test,
// as storage/postgres/pgtestdb does for PostgreSQL.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"svc/storage/sqlite"
)

// Open opens a fresh engine on a file in the test's temporary directory
// and closes it when the test ends. Each call has its own file, so tests
// that own their store may run in parallel.
func Open(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "svc.db"), AutoMigrate: true,
		BusyTimeout: 5 * time.Second, CacheSizeKiB: 16000, SearchScanLimit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
