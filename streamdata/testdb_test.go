package streamdata

import (
	"context"
	"testing"
	"time"

	"svc/storage/pgtest"
	"svc/storage/postgres"
)

var testDBURL string

// TestMain gives the package its own database (for the benchmarks) and
// drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "streamdata", &testDBURL) }

func openPG(t testing.TB) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Options{URL: testDBURL, MaxConns: 8, AcquireTimeout: 10 * time.Second,
		StatementTimeout: 5 * time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
