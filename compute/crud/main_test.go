package crud_test

import (
	"os"
	"testing"

	"svc/storage/pgtest"
)

// TestMain drops the PostgreSQL databases the tests made once they have all
// run (pgtest.Run says why not one by one).
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
