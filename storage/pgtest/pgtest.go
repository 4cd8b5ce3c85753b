// Package pgtest gives tests their own PostgreSQL database: each test
// package (Main) or test (New) creates a uniquely named database on the
// server at SVC_TEST_POSTGRES_URL and drops it afterwards (under Run, when
// the package's tests end), so packages and concurrent runs never share
// state.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
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

// Create makes a database named svc_test_<prefix>_<unix seconds>_<random>
// (the time lets sweepStale tell a crashed run's databases from a running
// one's) and returns its URL and a function that drops it (FORCE, so open
// pools do not block it), with the database and roles the SQL schemas saved
// in it made.
func Create(prefix string) (dbURL string, drop func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return "", nil, fmt.Errorf("tests need a PostgreSQL server at SVC_TEST_POSTGRES_URL (%s): %w", URL(), err)
	}
	// The admin connection lives only as long as the statement: a package
	// whose drops wait for Run's end would otherwise hold one server
	// connection per test database.
	defer admin.Close(context.Background())
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, fmt.Errorf("naming the test database: %w", err)
	}
	name := "svc_test_" + prefix + "_" + strconv.FormatInt(time.Now().Unix(), 10) + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("creating test database %s: %w", name, err)
	}
	dbURL, err = urlOf(name)
	if err != nil {
		return "", nil, err
	}
	return dbURL, func() error { return dropDatabase(name, dbURL) }, nil
}

// urlOf is the URL of the database name on the test server.
func urlOf(name string) (string, error) {
	u, err := url.Parse(URL())
	if err != nil {
		return "", fmt.Errorf("parsing SVC_TEST_POSTGRES_URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// dropDatabase drops the test database name (at dbURL) after what its SQL
// schemas made outside it: their databases, then their login roles.
func dropDatabase(name, dbURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return fmt.Errorf("dropping test database %s: %w", name, err)
	}
	defer admin.Close(context.Background())
	dbs, roles := sqlSchemaObjects(ctx, dbURL)
	for _, d := range dbs {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping SQL schema database %s: %w", d, err)
		}
	}
	if _, err := admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping test database %s: %w", name, err)
	}
	for _, r := range roles {
		// Best effort: a role left owning something elsewhere stays.
		_, _ = admin.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r}.Sanitize())
	}
	return nil
}

// Databases New made while Run runs the package's tests: they are dropped
// when the tests end, not one by one as each test ends. PostgreSQL answers
// every DROP DATABASE with an immediate checkpoint that the statement waits
// for, and that checkpoint writes every dirty buffer on the server, the
// other test packages' included (docs/decisions/0043-test-databases-dropped-at-package-end.md).
var held struct {
	sync.Mutex
	running bool
	drops   []func() error
}

// Run runs the package's tests (a TestMain body without os.Exit), then drops
// the databases New made during them, and returns the tests' exit code, or
// 1 when a database could not be dropped.
func Run(m *testing.M) int {
	if err := sweepStale(staleAfter); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: sweeping stale test databases:", err)
	}
	held.Lock()
	held.running = true
	held.Unlock()
	code := m.Run()
	held.Lock()
	drops := held.drops
	held.running, held.drops = false, nil
	held.Unlock()
	if err := dropAll(drops); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// dropAll runs drops a few at a time, so that their checkpoints overlap
// without taking many of the server's connections.
func dropAll(drops []func() error) error {
	sem := make(chan struct{}, 4)
	errs := make([]error, len(drops))
	var wg sync.WaitGroup
	for i, drop := range drops {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = drop()
			<-sem
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// staleAfter is the age past which a test database can only be left over
// from a run that ended without dropping it: a test binary that panicked or
// passed go test's timeout (30 minutes in make test) skips Run's drops.
const staleAfter = 3 * time.Hour

// sweepStale drops the test databases (and what their SQL schemas made)
// created more than age ago, by the time in their names. Names without one
// are left alone: they are not this package's to judge.
func sweepStale(age time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	rows, err := admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'svc\_test\_%'`)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var drops []func() error
	for _, n := range names {
		if created, ok := createdAt(n); ok && time.Since(created) > age {
			dbURL, err := urlOf(n)
			if err != nil {
				return err
			}
			drops = append(drops, func() error { return dropDatabase(n, dbURL) })
		}
	}
	return dropAll(drops)
}

// createdAt reads the creation time from a test database's name
// (svc_test_<prefix>_<unix seconds>_<12 hex digits>).
func createdAt(name string) (time.Time, bool) {
	parts := strings.Split(name, "_")
	if len(parts) < 5 || len(parts[len(parts)-1]) != 12 {
		return time.Time{}, false
	}
	if _, err := hex.DecodeString(parts[len(parts)-1]); err != nil {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(parts[len(parts)-2], 10, 64)
	if err != nil || sec < 1e9 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// Main is a TestMain body: it creates the package's database, stores its
// URL in *dst, runs the tests (Run), drops the database and exits.
func Main(m *testing.M, prefix string, dst *string) {
	dbURL, drop, err := Create(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*dst = dbURL
	code := Run(m)
	if err := drop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// New creates a database for one test. Under Run it is dropped when the
// package's tests end; otherwise when the test ends.
func New(t testing.TB, prefix string) string {
	t.Helper()
	dbURL, drop, err := Create(prefix)
	if err != nil {
		t.Fatal(err)
	}
	held.Lock()
	defer held.Unlock()
	if held.running {
		held.drops = append(held.drops, drop)
		return dbURL
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
