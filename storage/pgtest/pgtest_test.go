package pgtest

import (
	"context"
	"fmt"
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

func TestCreatedAt(t *testing.T) {
	for _, c := range []struct {
		name string
		sec  int64
		ok   bool
	}{
		{"svc_test_fastentity_1795000000_0123456789ab", 1795000000, true},
		{"svc_test_cmd_sqltimeout_def_1795000000_0123456789ab", 1795000000, true},
		{"svc_test_fastentity_0123456789ab", 0, false},                // before names carried a time
		{"svc_test_x_1795000000_0123456789zz", 0, false},              // not hex
		{"svc_test_x_12345_0123456789ab", 0, false},                   // not a plausible time
		{"svc_test_x_1795000000_0123456789abcd", 0, false},            // 14 digits
		{"svc_test__1795000000_0123456789ab", 1795000000, true},       // empty prefix
		{"svc_sqld_1795000000_0123456789ab", 0, false},                // too few parts
		{"svc_test_x_17950000000000000000000_0123456789ab", 0, false}, // overflows
	} {
		got, ok := createdAt(c.name)
		if ok != c.ok || (ok && got.Unix() != c.sec) {
			t.Errorf("createdAt(%q) = %v, %v; want %d, %v", c.name, got.Unix(), ok, c.sec, c.ok)
		}
	}
}

// A database whose name says it is older than the limit is dropped; a
// recent one and one whose name carries no time are left.
func TestSweepStaleDropsOnlyOldDatabases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) }) // after the drops below
	now := time.Now().Unix()
	names := map[string]bool{ // name: should survive
		fmt.Sprintf("svc_test_sweep_%d_%s", now-4*3600, "0000000000a1"): false,
		fmt.Sprintf("svc_test_sweep_%d_%s", now, "0000000000a2"):        true,
		"svc_test_sweep_0000000000a3":                                   true,
	}
	for n := range names {
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+n+" WITH (FORCE)")
		})
	}
	if err := sweepStale(staleAfter); err != nil {
		t.Fatal(err)
	}
	for n, survive := range names {
		var k int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, n).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if (k == 1) != survive {
			t.Errorf("%s: present %v, want %v", n, k == 1, survive)
		}
	}
}
