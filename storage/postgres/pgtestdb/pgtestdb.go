// Package pgtestdb opens the PostgreSQL engine on a test database (one
// pgtest made) with the settings every test package uses, so a loaded
// machine's slow migrations and queries do not fail them.
package pgtestdb

import (
	"context"
	"testing"
	"time"

	"svc/storage/postgres"
)

// Open opens url with migrations applied, at most maxConns connections and
// statementTimeout per statement; the engine closes with the test.
func Open(t testing.TB, url string, maxConns int, statementTimeout time.Duration) *postgres.DB {
	t.Helper()
	return OpenWith(t, url, maxConns, statementTimeout, nil)
}

// OpenWith is Open with edit applied to the options first (nil: none).
func OpenWith(t testing.TB, url string, maxConns int, statementTimeout time.Duration, edit func(*postgres.Options)) *postgres.DB {
	t.Helper()
	o := postgres.Options{URL: url, MaxConns: maxConns, AcquireTimeout: 10 * time.Second,
		StatementTimeout: statementTimeout, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second}
	if edit != nil {
		edit(&o)
	}
	db, err := postgres.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
