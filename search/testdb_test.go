package search

import (
	"testing"
	"time"

	"svc/storage/pgtest"
	"svc/storage/postgres"
	"svc/storage/postgres/pgtestdb"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "search", &testDBURL) }

func openPG(t testing.TB) *postgres.DB {
	t.Helper()
	return pgtestdb.Open(t, testDBURL, 8, 5*time.Minute)
}
