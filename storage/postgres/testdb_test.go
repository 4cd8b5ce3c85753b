package postgres

import (
	"context"
	"testing"
	"time"

	"svc/storage/pgtest"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "storage", &testDBURL) }

func testOptions() Options {
	return Options{URL: testDBURL, MaxConns: 8, MinConns: 0, AcquireTimeout: 5 * time.Second,
		StatementTimeout: time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second}
}

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
