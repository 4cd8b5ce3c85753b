package fast

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"svc/internal/await"
)

// rawSQL posts a query without touching t (it runs on other goroutines)
// and returns the status, headers and body.
func (e *sqlEnv) rawSQL(tenant, schema, sql string) (int, http.Header, []byte, error) {
	b, _ := json.Marshal(map[string]string{"schemaName": schema, "sql": sql})
	req, err := http.NewRequest("POST", e.base+"/sql/query", bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tenant)
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body, err
}

// superuser is a connection to the test database as svc's own user, to
// watch and cancel the schema roles' sessions.
func (e *sqlEnv) superuser(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// longSQL runs a pg_sleep as tenant over HTTP until the test ends, and
// returns once PostgreSQL is running it; the channel closes when the
// request has its answer.
func (e *sqlEnv) longSQL(t *testing.T, su *pgx.Conn, tenant string) <-chan struct{} {
	t.Helper()
	tag := "long_query_" + tenant
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _, _ = e.rawSQL(tenant, "shop", "SELECT pg_sleep(120) AS "+tag)
	}()
	t.Cleanup(func() {
		_, _ = su.Exec(context.Background(), `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%'||$1`, tag)
		<-done
	})
	await.Until(t, 60*time.Second, func() bool {
		var n int
		if err := su.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%'||$1`, tag).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}, "%s's long query starts", tenant)
	return done
}

// TestSQLConnectionBoundsHTTP (issue 23 item 5) serves with 2 SQL
// connections in total, 1 per tenant and 2 schemas per tenant:
//   - a third schema of a tenant answers 409 naming
//     SVC_SQL_MAX_SCHEMAS_PER_TENANT; replacing one by name still works;
//   - while A's long query runs, A's next query answers 429 with
//     Retry-After (problem+json), and B's query is served;
//   - while A's and B's long queries hold both connections, C's query
//     answers 503 with Retry-After, and entity creates and reads of every
//     tenant are still served before either long query ends.
//
// Before the bounds, A's second query ran (its role pool allowed 4) and
// schemas were unbounded.
func TestSQLConnectionBoundsHTTP(t *testing.T) {
	t.Parallel()
	env := newSQLEnvWith(t, "postgres", sqlLimits{conns: 2, connsPerTenant: 1, schemas: 2})
	for _, tn := range []string{"A", "B", "C"} {
		env.lockedModel(tn, "orders", 1, ordersSample)
		env.create(tn, "orders", 1, ordersSample)
		env.call(tn, "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	}

	t.Run("schemas per tenant", func(t *testing.T) {
		env.call("A", "PUT", "/sql/schema/putDefault/second", nil).ok(t)
		p := env.call("A", "PUT", "/sql/schema/putDefault/third", nil).problem(t, 409, "SQL_SCHEMA_LIMIT_REACHED")
		if p["setting"] != "SVC_SQL_MAX_SCHEMAS_PER_TENANT" || p["limit"] != float64(2) {
			t.Fatalf("409 properties %v", p)
		}
		env.call("A", "PUT", "/sql/schema/putDefault/second", nil).ok(t) // replacing by name
		env.call("A", "GET", "/sql/schema/?schemaName=third", nil).problem(t, 404, "NOT_FOUND")
		env.call("A", "DELETE", "/sql/schema/?schemaName=second", nil).ok(t)
		env.call("A", "PUT", "/sql/schema/putDefault/third", nil).ok(t)
		env.call("A", "DELETE", "/sql/schema/?schemaName=third", nil).ok(t)
	})

	busy := func(tenant string, status int, code, setting string) {
		t.Helper()
		st, hdr, body, err := env.rawSQL(tenant, "shop", "SELECT 1 AS one")
		if err != nil {
			t.Fatal(err)
		}
		r := entityResp{status: st, ctype: hdr.Get("Content-Type"), body: body}
		p := r.problem(t, status, code)
		if hdr.Get("Retry-After") != "1" || p["setting"] != setting || p["retryable"] != true {
			t.Fatalf("%s: Retry-After %q, properties %v", tenant, hdr.Get("Retry-After"), p)
		}
	}
	su := env.superuser(t)
	longA := env.longSQL(t, su, "A")
	busy("A", 429, "SQL_TENANT_CONNECTIONS_BUSY", "SVC_SQL_MAX_CONNECTIONS_PER_TENANT")
	wantRows(t, "B beside A's long query", env.query("B", "shop", "SELECT count(*) AS n FROM orders"), `{"n":1}`)
	longB := env.longSQL(t, su, "B")
	busy("C", 503, "SQL_CONNECTIONS_BUSY", "SVC_SQL_MAX_CONNECTIONS")

	// svc's own traffic does not share those connections.
	for _, tn := range []string{"A", "B", "C"} {
		id, _ := env.create(tn, "orders", 1, ordersSample)
		env.call(tn, "GET", "/entity/"+id, nil).ok(t)
		env.call(tn, "GET", fmt.Sprintf("/entity/%s/%d", "orders", 1), nil).ok(t)
	}
	for what, done := range map[string]<-chan struct{}{"A": longA, "B": longB} {
		select {
		case <-done:
			t.Fatalf("%s's long query ended before the entity traffic was served", what)
		default:
		}
	}
}
