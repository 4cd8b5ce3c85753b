package postgres

import (
	"context"
	"testing"
	"time"

	"svc/storage/pgtest"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
//
// Parallel tests: the tests share the package's database, and so its
// sql_schemas table, which every DB's SQL session watchdog sweeps with the
// limit of its own first SQLSchemas call. A test calls t.Parallel only when
// it asserts nothing global (connection counts, xid horizons, svc's
// advisory locks), its statements stay far below the 10 s limit of the
// other parallel tests' watchdogs, and it holds no transaction or long
// statement those watchdogs would end; parallel tests run only beside each
// other, after the rest. Tests with a 1 s watchdog limit
// (TestSQLHelpRoleSentences, TestSQLTenantLoginLimits), long statements or
// held cursors (TestSQLEvictionNeverBlocksOtherTenants,
// TestSQLConnectionBudget) or svc's advisory locks under a short wait
// (TestSQLTenantAdvisoryLocks) stay serial.
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
