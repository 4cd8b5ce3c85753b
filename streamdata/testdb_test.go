package streamdata

import (
	"testing"
	"time"

	"svc/storage/pgtest"
	"svc/storage/postgres"
	"svc/storage/postgres/pgtestdb"
)

var testDBURL string

// TestMain gives the package its own database (for the benchmarks) and
// drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "streamdata", &testDBURL) }

func openPG(t testing.TB) *postgres.DB {
	t.Helper()
	return pgtestdb.Open(t, testDBURL, 8, 5*time.Minute)
}
