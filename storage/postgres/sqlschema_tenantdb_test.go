package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// TestSQLTenantOidNamesPrivate (issue 23 item 2, the residual decision
// 0033 left): PostgreSQL prints a relation's, type's or schema's name
// from its oid without checking rights, so tenant A's role, counting
// through every oid of the server through the API path and a direct
// login, must find none of tenant B's identifiers: its views live in a
// database of their own, and svc's database names nothing after them.
// Before each schema had its own database, 16384::regclass in svc's
// database printed B's view names. A's role cannot log in to svc's
// database at all.
func TestSQLTenantOidNamesPrivate(t *testing.T) {
	t.Parallel() // see TestMain
	db := openTest(t)
	s := db.SQLSchemas(10 * time.Second)
	ctx := context.Background()
	ab := newSecTenants(t, s, [2]string{"oid-alpha-tenant", "alphaw"}, [2]string{"oid-bravo-tenant", "bravow"})
	a, b := ab[0], ab[1]
	secrets := []string{b.tenant, b.model, b.field, b.schemaName, b.table, b.column}

	// The highest oid in use anywhere the role could look: svc's
	// database and both schema databases.
	top := uint32(0)
	for _, d := range []string{"", a.login.Database, b.login.Database} {
		var q interface {
			QueryRow(context.Context, string, ...any) pgx.Row
		} = db.pool
		if d != "" {
			q = svcConnTo(t, d)
		}
		var m uint32
		if err := q.QueryRow(ctx, `SELECT greatest((SELECT max(oid) FROM pg_class), (SELECT max(oid) FROM pg_type),
			(SELECT max(oid) FROM pg_namespace), (SELECT max(oid) FROM pg_proc))::oid`).Scan(&m); err != nil {
			t.Fatal(err)
		}
		top = max(top, m)
	}
	// In statements of 50 000 oids each, every one well inside the limit.
	const chunk = 50000
	enum := func(from uint32) string {
		return fmt.Sprintf(`SELECT coalesce(string_agg(x::oid::regclass::text || ' ' || x::oid::regtype::text || ' ' || coalesce(format_type(x::oid, NULL), '')
		|| ' ' || x::oid::regnamespace::text || ' ' || x::oid::regproc::text, E'\n'), '') FROM generate_series(%d, %d) x`, from, from+chunk-1)
	}
	c := a.connect(t, "")
	for _, via := range []string{"api", "login"} {
		t.Run(via, func(t *testing.T) {
			var b strings.Builder
			for from := uint32(1); from <= top+1000; from += chunk {
				var text string
				if via == "api" {
					out, err := a.apiQuery(ctx, s, enum(from))
					if err != nil {
						t.Fatal(err)
					}
					text = strings.Join(out, "\n")
				} else if err := c.QueryRow(ctx, enum(from)).Scan(&text); err != nil {
					t.Fatal(err)
				}
				b.WriteString(text)
				b.WriteString("\n")
			}
			text := b.String()
			// The enumeration reaches A's own views, so it did run over
			// the schema's objects.
			if !strings.Contains(text, a.table) {
				t.Fatalf("counting through %d oids did not find A's own view %q", top+1000, a.table)
			}
			for _, sec := range secrets {
				if strings.Contains(text, sec) {
					t.Errorf("oid names show tenant B's %q to tenant A's role", sec)
				}
			}
		})
	}
	// No login to svc's database, where the opaque views are.
	u, err := url.Parse(testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	svcDB := strings.TrimPrefix(u.Path, "/")
	u.User = url.UserPassword(a.login.Role, a.login.Password)
	if cc, err := pgx.Connect(ctx, u.String()); err == nil {
		cc.Close(ctx)
		t.Errorf("A's role logged in to svc's database %s", svcDB)
	} else if sqlState(err) != "42501" {
		t.Errorf("A's role logging in to svc's database: %v, want permission denied (42501)", err)
	}
	// Nor to B's database.
	if cc, err := pgx.Connect(ctx, strings.Replace(u.String(), "/"+svcDB, "/"+b.login.Database, 1)); err == nil {
		cc.Close(ctx)
		t.Errorf("A's role logged in to B's database")
	}
	if a.login.Database == svcDB || a.login.Database == b.login.Database {
		t.Errorf("databases: A %s, B %s, svc %s", a.login.Database, b.login.Database, svcDB)
	}
}

// TestSQLAsOfThroughTenantDatabase: with the views in the schema's own
// database, svc.point_time still picks each entity's last revision at
// that instant (deleted ones left out), through the API path and a
// direct login, and the instant reaches svc's database as a parameter of
// the remote query (EXPLAIN VERBOSE shows it there), so only the rows
// valid then cross over.
func TestSQLAsOfThroughTenantDatabase(t *testing.T) {
	db := openTest(t)
	s := db.SQLSchemas(10 * time.Second)
	ctx := context.Background()
	a := newSecTenant(t, s, "asof-tenant", "asofq")
	gone, kept := uuid.New(), uuid.New()
	sec := int64(time.Second)
	ins := func(q string, args ...any) {
		t.Helper()
		if _, err := db.pool.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(v string) string { return fmt.Sprintf(`{"%s":"%s"}`, a.field, v) }
	ins(`INSERT INTO entities (tenant, id, model_name, model_version, state, version, deleted, tx_id, created_ns, updated_ns, doc)
		VALUES ($1, $2, $3, 1, 'DELETED', 3, true, $2, $4, $5, $6), ($1, $7, $3, 1, 'CREATED', 1, false, $7, $4, $4, $8)`,
		a.tenant, gone, a.model, 1000*sec, 3000*sec, doc("two"), kept, doc("kept"))
	for _, r := range []struct {
		id      uuid.UUID
		version int
		change  string
		at      int64
		data    string
	}{{gone, 1, "CREATED", 1000, doc("one")}, {gone, 2, "UPDATED", 2000, doc("two")}, {gone, 3, "DELETED", 3000, doc("two")}, {kept, 1, "CREATED", 1000, doc("kept")}} {
		ins(`INSERT INTO entity_revisions (tenant, id, version, model_name, model_version, state, change_type, tx_id, created_ns, at_ns, data)
			VALUES ($1, $2, $3, $4, 1, 'S', $5, $2, $6, $7, convert_to($8, 'UTF8'))`, a.tenant, r.id, r.version, a.model, r.change, 1000*sec, r.at*sec, r.data)
	}
	col := pgx.Identifier{a.column}.Sanitize()
	q := "SELECT coalesce(string_agg(" + col + ", ',' ORDER BY " + col + "), '') FROM " + pgx.Identifier{a.table}.Sanitize()
	c := a.connect(t, "")
	for _, tc := range []struct {
		at   int64 // seconds; 0 is the current data
		want string
	}{{0, "kept"}, {500, ""}, {1500, "kept,one"}, {2500, "kept,two"}, {3500, "kept"}} {
		var pt *time.Time
		if tc.at != 0 {
			p := time.Unix(tc.at, 0).UTC()
			pt = &p
		}
		cur, err := s.OpenSQL(ctx, storage.SQLQuery{Tenant: a.tenant, SchemaID: a.id, SQL: q, PointTime: pt, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		row, err := cur.Next()
		cur.Close()
		if err != nil || len(row) != 1 || row[0].Text != tc.want {
			t.Errorf("API as of %ds: %v %v, want %q", tc.at, row, err, tc.want)
		}
		set := "RESET svc.point_time"
		if pt != nil {
			set = "SET svc.point_time = '" + pt.Format(time.RFC3339Nano) + "'"
		}
		var got string
		if _, err := c.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, q).Scan(&got); err != nil || got != tc.want {
			t.Errorf("login as of %ds: %q %v, want %q", tc.at, got, err, tc.want)
		}
	}
	if _, err := c.Exec(ctx, "SET svc.point_time = '1970-01-01T00:25:00Z'"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "EXPLAIN (VERBOSE, COSTS OFF) "+q)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	if !strings.Contains(p, "Remote SQL:") || !strings.Contains(p, "(svc_from <= $") || !strings.Contains(p, "(svc_to > $") {
		t.Errorf("the instant does not reach svc's database as a condition of the remote query:\n%s", p)
	}
}

// TestSQLSchemaDatabaseDropped: deleting a schema drops its database
// (ending the sessions in it), its opaque views in svc's database and its
// roles.
func TestSQLSchemaDatabaseDropped(t *testing.T) {
	db := openTest(t)
	s := db.SQLSchemas(10 * time.Second)
	ctx := context.Background()
	a := newSecTenant(t, s, "drop-tenant", "dropq")
	c := a.connect(t, "")
	var remote, fetch string
	if err := db.pool.QueryRow(ctx, `SELECT remote_schema, fetch_role FROM sql_schemas WHERE tenant = $1 AND id = $2`, a.tenant, a.id).Scan(&remote, &fetch); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSQLSchema(ctx, a.tenant, a.id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a session in the schema's database outlived it")
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1) + (SELECT count(*) FROM pg_roles WHERE rolname IN ($2, $3))
		+ (SELECT count(*) FROM pg_namespace WHERE nspname = $4)`, a.login.Database, a.login.Role, fetch, remote).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d of database, roles and opaque schema left (%v)", n, err)
	}
	if _, err := s.SQLCredentials(ctx, a.tenant, a.id, false); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("credentials after delete: %v", err)
	}
}

// svcConnTo connects as svc's own (superuser) role to another database of
// the test server; the session closes with the test.
func svcConnTo(t *testing.T, database string) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + database
	c, err := pgx.Connect(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
