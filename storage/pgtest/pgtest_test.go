package pgtest

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// exists reports whether the database at dbURL is on the server.
func exists(t *testing.T, dbURL string) bool {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, strings.TrimPrefix(u.Path, "/")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// Outside Run, a test's database goes when the test ends.
func TestNewDropsWithTheTest(t *testing.T) {
	var dbURL string
	t.Run("owner", func(t *testing.T) {
		dbURL = New(t, "pgtest")
		if !exists(t, dbURL) {
			t.Fatal("New returned a database the server does not have")
		}
	})
	if exists(t, dbURL) {
		t.Fatal("the database outlived its test")
	}
}

// Under Run, the databases outlive their tests and go when the package's
// tests end (dropAll), all of them.
func TestNewUnderRunDropsAtTheEnd(t *testing.T) {
	held.Lock()
	held.running = true
	held.Unlock()
	take := func() []func() error {
		held.Lock()
		defer held.Unlock()
		d := held.drops
		held.running, held.drops = false, nil
		return d
	}
	t.Cleanup(func() { _ = dropAll(take()) }) // a failed test leaves nothing behind
	var urls []string
	t.Run("owners", func(t *testing.T) {
		for range 3 {
			t.Run("owner", func(t *testing.T) { urls = append(urls, New(t, "pgtest")) })
		}
	})
	drops := take()
	if len(drops) != len(urls) {
		t.Fatalf("%d drops held for %d databases", len(drops), len(urls))
	}
	for _, u := range urls {
		if !exists(t, u) {
			t.Fatal("a database under Run was dropped when its test ended")
		}
	}
	if err := dropAll(drops); err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		if exists(t, u) {
			t.Fatal("dropAll left a database")
		}
	}
}
