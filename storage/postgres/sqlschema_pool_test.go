package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/internal/await"
	"svc/storage"
)

// sqlTenants saves one empty SQL schema for each of n tenants ("<prefix>00"
// …) and drops them (and so their cluster-wide roles) when the test ends.
// Each save creates a PostgreSQL database and each delete drops one, which
// is mostly waiting on the server: up to sqlTenantsAtOnce run at a time.
func sqlTenants(t *testing.T, db *DB, prefix string, n int) (*SQLSchemas, []storage.SQLQuery) {
	t.Helper()
	st := db.SQLSchemas(time.Minute)
	recs := make([]*storage.SQLSchema, n)
	for i := range recs {
		recs[i] = &storage.SQLSchema{Tenant: fmt.Sprintf("%s%02d", prefix, i), ID: uuid.Must(uuid.NewUUID()).String(), Name: "s", Tables: []byte("[]")}
	}
	saved := make([]bool, n)
	t.Cleanup(func() {
		for i, err := range atOnce(n, func(i int) error {
			if !saved[i] {
				return nil
			}
			return st.DeleteSQLSchema(context.Background(), recs[i].Tenant, recs[i].ID)
		}) {
			if err != nil {
				t.Errorf("cleanup of %s: %v", recs[i].Tenant, err)
			}
		}
	})
	errs := atOnce(n, func(i int) error {
		err := st.SaveSQLSchema(context.Background(), recs[i], nil)
		saved[i] = err == nil
		return err
	})
	var qs []storage.SQLQuery
	for i, r := range recs {
		if errs[i] != nil {
			t.Fatalf("saving %s: %v", r.Tenant, errs[i])
		}
		qs = append(qs, storage.SQLQuery{Tenant: r.Tenant, SchemaID: r.ID, SQL: "SELECT 1", Timeout: 5 * time.Minute})
	}
	return st, qs
}

// sqlTenantsAtOnce bounds the saves (and deletes) sqlTenants runs
// together: each holds a connection of the test's pool, one to the new
// database and, while it probes the foreign server, one the server makes
// to itself.
const sqlTenantsAtOnce = 4

// atOnce runs f(0) … f(n-1), sqlTenantsAtOnce at a time, and returns their
// errors by index once all have returned.
func atOnce(n int, f func(i int) error) []error {
	errs := make([]error, n)
	sem := make(chan struct{}, sqlTenantsAtOnce)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}

// longQuery starts `SELECT pg_sleep(300)` as q's role and waits until
// PostgreSQL runs it; the returned channel closes when the query ends,
// which the test's cleanup brings about by cancelling the backend.
func longQuery(t *testing.T, db *DB, st *SQLSchemas, q storage.SQLQuery) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	q.SQL = "SELECT pg_sleep(300) AS long_query_" + q.Tenant
	go func() {
		defer close(done)
		cur, err := st.OpenSQL(context.Background(), q)
		if err == nil {
			cur.Close()
		}
	}()
	t.Cleanup(func() {
		c, err := db.acquire(context.Background())
		if err == nil {
			_, _ = c.Exec(context.Background(), `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%long_query_'||$1`, q.Tenant)
			c.Release()
		}
		<-done
	})
	waitFor(t, "the long query to run", func() bool {
		c, err := db.acquire(context.Background())
		if err != nil {
			return false
		}
		defer c.Release()
		var n int
		_ = c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%long_query_'||$1`, q.Tenant).Scan(&n)
		return n == 1
	})
	return done
}

// waitFor polls cond until it holds, failing after a bound far above
// what the condition needs on a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.Until(t, 60*time.Second, cond, "%s", what)
}

func running(done <-chan struct{}) bool {
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// TestSQLSchemaSavesOfTenantsAtOnce: schemas of different tenants are
// saved and then deleted at the same time without error. Each save grants
// CONNECT on svc's database and each delete revokes it, and PostgreSQL
// failed the second of two overlapping transactions doing that with
// "tuple concurrently updated" (XX000) until they took
// lockSvcDatabaseACL's lock.
func TestSQLSchemaSavesOfTenantsAtOnce(t *testing.T) {
	t.Parallel() // see TestMain
	db := openTest(t)
	sqlTenants(t, db, "atonce", sqlTenantsAtOnce)
}

// TestSQLEvictionNeverBlocksOtherTenants (issue 23 item 4): with every
// role connection busy — one tenant in a long pg_sleep, 31 others holding
// open cursors — a 33rd tenant's query and then another tenant's quick
// query are both served while the long query is still running. Before the
// fix, the 33rd schema closed an arbitrary (here: necessarily busy) role
// pool while holding the lock every query takes, so the quick query
// waited until the busy one ended.
func TestSQLEvictionNeverBlocksOtherTenants(t *testing.T) {
	o := testOptions()
	o.SQLMaxConns, o.SQLMaxConnsPerTenant = 40, 4
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, qs := sqlTenants(t, db, "evict", 33)
	long := longQuery(t, db, st, qs[0])
	for _, q := range qs[1:32] {
		cur, err := st.OpenSQL(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cur.Close)
	}

	served := func(q storage.SQLQuery) <-chan error {
		ch := make(chan error, 1)
		go func() {
			cur, err := st.OpenSQL(context.Background(), q)
			if err == nil {
				cur.Close()
			}
			ch <- err
		}()
		return ch
	}
	for _, step := range []struct {
		what string
		q    storage.SQLQuery
	}{
		{"a 33rd tenant's first query", qs[32]},
		{"another tenant's quick query", qs[1]},
	} {
		select {
		case err := <-served(step.q):
			if err != nil {
				t.Fatalf("%s: %v", step.what, err)
			}
		case <-long:
			t.Fatalf("%s waited for the long query to end", step.what)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s is stuck behind the busy role connections", step.what)
		}
		if !running(long) {
			t.Fatalf("%s: the long query ended first", step.what)
		}
	}
}

// TestSQLConnectionBudget (issue 23 item 5): with a total of 2 and 1 per
// tenant, and tenant 0 in a long query: its second query is refused at
// once with the per-tenant setting; tenant 1's query runs and its idle
// connection is then evicted for tenant 2's; with both connections busy,
// tenant 3 is refused at once naming the total. svc never holds more than
// 2 role connections, and nothing waited on the long query.
func TestSQLConnectionBudget(t *testing.T) {
	o := testOptions()
	o.SQLMaxConns, o.SQLMaxConnsPerTenant = 2, 1
	db, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, qs := sqlTenants(t, db, "budget", 4)
	long := longQuery(t, db, st, qs[0])
	ctx := context.Background()

	busy := func(q storage.SQLQuery, setting string, tenant bool) {
		t.Helper()
		cur, err := st.OpenSQL(ctx, q)
		var be *storage.SQLBusyError
		if !errors.As(err, &be) || be.Setting != setting || be.Tenant != tenant {
			if err == nil {
				cur.Close()
			}
			t.Fatalf("%s: got %v, want SQLBusyError naming %s", q.Tenant, err, setting)
		}
	}
	open := func(q storage.SQLQuery) storage.SQLCursor {
		t.Helper()
		cur, err := st.OpenSQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q.Tenant, err)
		}
		return cur
	}
	checkOpen := func(want int) {
		t.Helper()
		if n, _, _ := db.sqlRoles.stats(""); n != want {
			t.Fatalf("%d role connections open, want %d", n, want)
		}
	}

	busy(qs[0], "SVC_SQL_MAX_CONNECTIONS_PER_TENANT", true)
	open(qs[1]).Close() // kept idle
	checkOpen(2)
	held := open(qs[2]) // evicts tenant 1's idle connection
	t.Cleanup(held.Close)
	checkOpen(2)
	busy(qs[3], "SVC_SQL_MAX_CONNECTIONS", false)
	busy(qs[1], "SVC_SQL_MAX_CONNECTIONS", false)
	if !running(long) {
		t.Fatal("the long query ended before the refusals")
	}
	held.Close()
	open(qs[3]).Close() // the released connection makes room again
	checkOpen(2)
}
