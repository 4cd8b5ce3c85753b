package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
	"svc/storage/memory"
	"svc/storage/postgres"
)

func testURL() string {
	if u := os.Getenv("SVC_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var testDBURL string

// TestMain makes this package's own database and drops it afterwards.
func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	admin, err := pgx.Connect(ctx, testURL())
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "model tests need a PostgreSQL server at SVC_TEST_POSTGRES_URL (%s): %v\n", testURL(), err)
		os.Exit(1)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "svc_test_model_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	u, _ := url.Parse(testURL())
	u.Path = "/" + name
	testDBURL = u.String()
	cancel()

	code := m.Run()

	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
		fmt.Fprintln(os.Stderr, "dropping test database:", err)
	}
	admin.Close(ctx)
	os.Exit(code)
}

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
