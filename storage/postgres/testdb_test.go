package postgres

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
)

// testURL is the server tests use; each test package makes its own
// database on it and drops it afterwards.
func testURL() string {
	if u := os.Getenv("SVC_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var testDBURL string

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	admin, err := pgx.Connect(ctx, testURL())
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "postgres tests need a server at SVC_TEST_POSTGRES_URL (%s): %v\n", testURL(), err)
		os.Exit(1)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "svc_test_storage_" + hex.EncodeToString(b[:])
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
