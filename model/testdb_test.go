package model

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "model", &testDBURL) }

var engines = []string{"memory", "sqlite", "postgres"}

// newStore returns an empty store of the engine.
func newStore(t testing.TB, engine string) storage.Models {
	t.Helper()
	if engine == "memory" {
		return memory.NewModels()
	}
	if engine == "sqlite" {
		return sqlitetest.Open(t).Models()
	}
	db := pgtestdb.Open(t, testDBURL, 8, time.Minute)
	c, err := pgx.Connect(context.Background(), testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), "TRUNCATE models"); err != nil {
		t.Fatal(err)
	}
	return db.Models()
}

func forEachEngine(t *testing.T, run func(t *testing.T, store storage.Models)) {
	for _, e := range engines {
		t.Run(e, func(t *testing.T) { run(t, newStore(t, e)) })
	}
}
