package model

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres"
)

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m, "model", &testDBURL) }

var engines = []string{"memory", "postgres"}

// newStore returns an empty store of the engine.
func newStore(t testing.TB, engine string) storage.Models {
	t.Helper()
	if engine == "memory" {
		return memory.NewModels()
	}
	db, err := postgres.Open(context.Background(), postgres.Options{URL: testDBURL, MaxConns: 8, AcquireTimeout: 5 * time.Second,
		StatementTimeout: time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
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
