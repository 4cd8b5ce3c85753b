// Package pgtest gives tests their own PostgreSQL database: each test
// package (Main) or test (New) creates a uniquely named database on the
// server at SVC_TEST_POSTGRES_URL and drops it afterwards, so packages and
// concurrent runs never share state.
package pgtest

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

// URL is the server tests use: SVC_TEST_POSTGRES_URL, or the local default.
func URL() string {
	if u := os.Getenv("SVC_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Create makes a database named svc_test_<prefix>_<random> and returns its
// URL and a function that drops it (FORCE, so open pools do not block it).
func Create(prefix string) (dbURL string, drop func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return "", nil, fmt.Errorf("tests need a PostgreSQL server at SVC_TEST_POSTGRES_URL (%s): %w", URL(), err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		admin.Close(ctx)
		return "", nil, fmt.Errorf("naming the test database: %w", err)
	}
	name := "svc_test_" + prefix + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, fmt.Errorf("creating test database %s: %w", name, err)
	}
	u, err := url.Parse(URL())
	if err != nil {
		admin.Close(ctx)
		return "", nil, fmt.Errorf("parsing SVC_TEST_POSTGRES_URL: %w", err)
	}
	u.Path = "/" + name
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		defer admin.Close(ctx)
		dbs, roles := sqlSchemaObjects(ctx, u.String())
		for _, d := range dbs {
			if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d}.Sanitize()+" WITH (FORCE)"); err != nil {
				return fmt.Errorf("dropping SQL schema database %s: %w", d, err)
			}
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping test database %s: %w", name, err)
		}
		for _, r := range roles {
			// Best effort: a role left owning something elsewhere stays.
			_, _ = admin.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r}.Sanitize())
		}
		return nil
	}
	return u.String(), drop, nil
}

// Main is a TestMain body: it creates the package's database, stores its
// URL in *dst, runs the tests, drops the database and exits.
func Main(m *testing.M, prefix string, dst *string) {
	dbURL, drop, err := Create(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*dst = dbURL
	code := m.Run()
	if err := drop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// New creates a database for one test and drops it when the test ends.
func New(t testing.TB, prefix string) string {
	t.Helper()
	dbURL, drop, err := Create(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dbURL
}

// sqlSchemaObjects lists what the SQL schemas saved in the test database
// made outside it (storage/postgres sqlschema_tenantdb.go): a database
// and login roles per schema, cluster-wide objects that would outlive the
// test database. Errors (no such table yet) list nothing.
func sqlSchemaObjects(ctx context.Context, dbURL string) (dbs, roles []string) {
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, nil
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT coalesce(pg_database, ''), pg_role, coalesce(fetch_role, '') FROM sql_schemas`)
	if err != nil {
		return nil, nil
	}
	defer rows.Close()
	for rows.Next() {
		var d, r, f string
		if rows.Scan(&d, &r, &f) != nil {
			return dbs, roles
		}
		if d != "" {
			dbs = append(dbs, d)
		}
		roles = append(roles, r)
		if f != "" {
			roles = append(roles, f)
		}
	}
	return dbs, roles
}
