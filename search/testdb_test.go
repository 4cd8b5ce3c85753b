package search

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

	"svc/storage/postgres"
)

func testURL() string {
	if u := os.Getenv("SVC_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var testDBURL string

// TestMain gives the package its own database and drops it afterwards.
func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	admin, err := pgx.Connect(ctx, testURL())
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "search tests need a server at SVC_TEST_POSTGRES_URL (%s): %v\n", testURL(), err)
		os.Exit(1)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "svc_test_search_" + hex.EncodeToString(b[:])
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
