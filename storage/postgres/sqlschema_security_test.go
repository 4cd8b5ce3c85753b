package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/migrations"
	"svc/storage"
)

// secTenant is one tenant with a saved SQL schema whose names (tenant
// id, model, table, field, schema name) are distinctive enough to search
// the catalogue for.
type secTenant struct {
	tenant, model, table, column, field, schemaName string
	id                                              string
	login                                           storage.SQLLogin
}

// newSecTenant saves a schema for tenant with one root view and one JSON
// view over model, and issues its login. The schema (and so its
// cluster-wide role) is dropped when the test ends.
func newSecTenant(t *testing.T, s *SQLSchemas, tenant, tag string) *secTenant {
	t.Helper()
	return newSecTenants(t, s, [2]string{tenant, tag})[0]
}

// newSecTenants is newSecTenant for each {tenant, tag}, saving (and
// dropping) the schemas at the same time: each save creates a PostgreSQL
// database and each drop drops one, which is mostly waiting on the server.
func newSecTenants(t *testing.T, s *SQLSchemas, tenants ...[2]string) []*secTenant {
	t.Helper()
	out := make([]*secTenant, len(tenants))
	saved := make([]bool, len(tenants))
	t.Cleanup(func() {
		for i, err := range atOnce(len(out), func(i int) error {
			if !saved[i] {
				return nil
			}
			return s.DeleteSQLSchema(context.Background(), out[i].tenant, out[i].id)
		}) {
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("cleanup of %s: %v", out[i].tenant, err)
			}
		}
	})
	errs := atOnce(len(out), func(i int) error {
		ctx := context.Background()
		tenant, tag := tenants[i][0], tenants[i][1]
		st := &secTenant{tenant: tenant, model: tag + "model", table: tag + "table", column: tag + "column",
			field: tag + "field", schemaName: tag + "schema", id: uuid.Must(uuid.NewUUID()).String()}
		out[i] = st
		key := storage.ModelKey{Name: st.model, Version: 1}
		views := []storage.SQLView{
			{Name: st.table, Model: key, Path: "$", Columns: []storage.SQLColumn{
				{Name: "entity_id", Category: "SPECIAL", Key: "ENTITY_ID"},
				{Name: st.column, Category: "DATA", Key: "." + st.field, DataType: "STRING"}}},
			{Name: st.table + "_json", Model: key, Path: "json", Columns: []storage.SQLColumn{
				{Name: "entity", Category: "SPECIAL", Key: "JSON"}}},
		}
		rec := &storage.SQLSchema{Tenant: tenant, ID: st.id, Name: st.schemaName, Tables: []byte(`[]`)}
		if err := s.SaveSQLSchema(ctx, rec, views); err != nil {
			return err
		}
		st.id = rec.ID
		saved[i] = true
		l, err := s.SQLCredentials(ctx, tenant, st.id, false)
		if err != nil {
			return err
		}
		st.login = l
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", tenants[i][0], err)
		}
	}
	return out
}

// connect logs in with the issued credentials, as psql or a BI tool
// would; the session closes with the test.
func (st *secTenant) connect(t *testing.T, database string) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(st.login.Role, st.login.Password)
	if database == "" {
		database = st.login.Database
	}
	u.Path = "/" + database
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// apiQuery runs sql the way POST {ctx}/sql/query does and returns every
// value of the result as text.
func (st *secTenant) apiQuery(ctx context.Context, s *SQLSchemas, sql string) ([]string, error) {
	cur, err := s.OpenSQL(ctx, storage.SQLQuery{Tenant: st.tenant, SchemaID: st.id, SQL: sql, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	var out []string
	for {
		row, err := cur.Next()
		if err != nil {
			return out, err
		}
		if row == nil {
			return out, nil
		}
		for _, v := range row {
			out = append(out, v.Text)
		}
	}
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	var se *storage.SQLStatementError
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// TestSQLTenantAdvisoryLocks (issue 23 item 1): no advisory-lock
// function form, run by a tenant role through the API path or a direct
// login with the issued credentials, takes a lock; svc's migration lock,
// a trusted-key registration (key trusted:<tenant>) and the keypair
// rotation lock (two int keys) still proceed while the tenant's session
// stays open.
func TestSQLTenantAdvisoryLocks(t *testing.T) {
	db := openTest(t)
	s := db.SQLSchemas(10 * time.Second)
	ctx := context.Background()
	attacker := newSecTenant(t, s, "lock-attacker", "lkatt")
	const victim = "lock-victim"

	// The keys svc itself locks on.
	bigKeys := fmt.Sprintf("%d::bigint", int64(migrateLockKey))
	trusted := "hashtextextended('trusted:" + victim + "', 0)"
	rotation := "hashtext('svc.iam_keypair.rotate'), hashtext('svc-audience')"

	// Every function form: session or transaction level, exclusive or
	// shared, waiting or try, one bigint key or two int keys.
	type form struct {
		fn, args string
		xact     bool
	}
	var forms []form
	for _, try := range []string{"", "try_"} {
		for _, xact := range []bool{false, true} {
			for _, shared := range []string{"", "_shared"} {
				x := ""
				if xact {
					x = "xact_"
				}
				fn := "pg_" + try + "advisory_" + x + "lock" + shared
				forms = append(forms, form{fn, "bigint", xact}, form{fn, "int,int", xact})
			}
		}
	}
	if len(forms) != 16 {
		t.Fatalf("%d forms", len(forms))
	}

	// svcProceeds checks that svc's own locks are free: the migration
	// runs (its lock wait is bounded by MigrateLockWait), a trusted key
	// of the victim tenant registers and the rotation lock is taken.
	svcProceeds := func(t *testing.T) {
		t.Helper()
		o := testOptions()
		o.MigrateLockWait = 3 * time.Second
		o.AutoMigrate = false
		other, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Migrate(ctx); err != nil {
			t.Errorf("svc migrate while the tenant session is open: %v", err)
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		k := &storage.TrustedKey{KID: "k-" + uuid.NewString(), Tenant: victim, JWK: []byte(`{"kty":"RSA","n":"x"}`), Issuers: []string{}}
		if err := db.TrustedKeys().PutTrustedKey(cctx, k, storage.TrustedKeyPut{}); err != nil {
			t.Errorf("trusted-key registration of another tenant while the tenant session is open: %v", err)
		}
		err = pgx.BeginFunc(cctx, db.pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(cctx, "SELECT pg_advisory_xact_lock("+rotation+")")
			return err
		})
		if err != nil {
			t.Errorf("keypair rotation lock while the tenant session is open: %v", err)
		}
	}

	for _, f := range forms {
		for _, via := range []string{"api", "login"} {
			t.Run(f.fn+"("+f.args+")/"+via, func(t *testing.T) {
				stmt := fmt.Sprintf("SELECT %[1]s(%[2]s)::text, %[1]s(%[3]s)::text", f.fn, bigKeys, trusted)
				if f.args == "int,int" {
					stmt = fmt.Sprintf("SELECT %s(%s)::text", f.fn, rotation)
				}
				switch via {
				case "api":
					out, err := attacker.apiQuery(ctx, s, stmt)
					if sqlState(err) != "42501" {
						t.Errorf("API %s: %v %v, want permission denied (42501)", f.fn, out, err)
					}
					svcProceeds(t)
				case "login":
					c := attacker.connect(t, "")
					if f.xact {
						if _, err := c.Exec(ctx, "BEGIN"); err != nil {
							t.Fatal(err)
						}
					}
					_, err := c.Exec(ctx, stmt)
					if sqlState(err) != "42501" {
						t.Errorf("login %s: %v, want permission denied (42501)", f.fn, err)
					}
					// The session (and, for xact forms, its transaction)
					// stays open while svc works.
					svcProceeds(t)
				}
			})
		}
	}
}

// catalogPrivate: what migration 0035 takes back from PUBLIC;
// TestSQLTenantCatalogPrivate reads each whole.
var catalogPrivate = catalogPrivateRels

// catalogFiltered lists catalogue views left readable because they show
// only objects the reader owns or holds a privilege on.
var catalogFiltered = []string{
	"pg_stats", "pg_stats_ext", "pg_namespace", "pg_roles", "pg_auth_members",
	"pg_depend", "pg_locks", "pg_proc",
	"information_schema.tables", "information_schema.columns", "information_schema.views",
	"information_schema.schemata", "information_schema.table_privileges",
	"information_schema.column_privileges", "information_schema.role_table_grants",
	"information_schema.role_column_grants", "information_schema.view_table_usage",
	"information_schema.view_column_usage", "information_schema.column_udt_usage",
	"information_schema.table_constraints", "information_schema.key_column_usage",
	"information_schema.constraint_column_usage", "information_schema.triggers",
	"information_schema.attributes", "information_schema.element_types",
	"information_schema.user_defined_types", "information_schema.domains",
}

// TestSQLTenantCatalogPrivate (issue 23 item 2): tenant A's role, through
// the API path and a direct login, reads the catalogue tables, views and
// functions that describe relations, columns, types, constraints,
// indexes, triggers, policies and comments, and finds none of tenant B's
// identifiers: tenant id, model name, view name, column name, field path
// or schema name; role and schema names carry none of them either. Its
// own views still answer, with their column names.
func TestSQLTenantCatalogPrivate(t *testing.T) {
	t.Parallel() // see TestMain
	db := openTest(t)
	s := db.SQLSchemas(10 * time.Second)
	ctx := context.Background()
	ab := newSecTenants(t, s, [2]string{"cat-alpha-tenant", "alphaq"}, [2]string{"cat-bravo-tenant", "bravoq"})
	a, b := ab[0], ab[1]
	secrets := []string{b.tenant, b.model, b.field, b.schemaName, b.table, b.column}
	for _, n := range []string{b.login.Role, b.login.Schema} {
		for _, sec := range append(secrets, b.table, "bravo") {
			if strings.Contains(n, sec) {
				t.Errorf("PostgreSQL name %q of tenant B embeds %q", n, sec)
			}
		}
	}
	// Rule, constraint, index and trigger oids and B's view, read as svc
	// in B's database, as a tenant counting through oids would find them.
	var ruleOids, conOids, indOids, trigOids string
	var bView uint32
	bdb, err := s.dialDatabase(ctx, b.login.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close(ctx)
	if err := bdb.QueryRow(ctx, `SELECT (SELECT array_agg(oid)::text FROM pg_rewrite), (SELECT array_agg(oid)::text FROM pg_constraint),
		(SELECT array_agg(indexrelid)::text FROM pg_index), coalesce((SELECT array_agg(oid)::text FROM pg_trigger), '{}'),
		$1::regclass::oid`, pgx.Identifier{b.login.Schema, b.table}.Sanitize()).Scan(&ruleOids, &conOids, &indOids, &trigOids, &bView); err != nil {
		t.Fatal(err)
	}
	bv := fmt.Sprint(bView)
	probes := []struct{ name, sql string }{
		{"pg_views", `SELECT string_agg(schemaname || ' ' || viewname || ' ' || coalesce(definition, ''), E'\n') FROM pg_views`},
		{"pg_get_viewdef", `SELECT string_agg(pg_get_viewdef(c.oid), E'\n') FROM pg_class c WHERE c.relkind = 'v'`},
		{"pg_get_viewdef text", `SELECT string_agg(pg_get_viewdef(quote_ident(n.nspname) || '.' || quote_ident(c.relname), true), E'\n') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v'`},
		{"pg_rewrite", `SELECT string_agg(ev_action::text, E'\n') FROM pg_rewrite`},
		{"pg_get_ruledef", `SELECT string_agg(pg_get_ruledef(x), E'\n') FROM unnest('` + ruleOids + `'::oid[]) x`},
		{"pg_namespace", `SELECT string_agg(nspname::text, ' ') FROM pg_namespace`},
		{"pg_roles", `SELECT string_agg(rolname || ' ' || coalesce(rolconfig::text, ''), E'\n') FROM pg_roles`},
		{"pg_db_role_setting", `SELECT string_agg(setconfig::text, E'\n') FROM pg_db_role_setting`},
		{"information_schema.views", `SELECT string_agg(table_schema || ' ' || table_name || ' ' || coalesce(view_definition, ''), E'\n') FROM information_schema.views`},
		{"information_schema.tables", `SELECT string_agg(table_schema || ' ' || table_name, E'\n') FROM information_schema.tables`},
		{"information_schema.columns", `SELECT string_agg(table_schema || ' ' || table_name || ' ' || column_name, E'\n') FROM information_schema.columns`},
		{"information_schema.schemata", `SELECT string_agg(schema_name::text, ' ') FROM information_schema.schemata`},
		{"information_schema.table_privileges", `SELECT string_agg(grantee || ' ' || table_schema || ' ' || table_name, E'\n') FROM information_schema.table_privileges`},
		{"information_schema.view_table_usage", `SELECT string_agg(view_schema || ' ' || view_name || ' ' || table_name, E'\n') FROM information_schema.view_table_usage`},
		{"information_schema.view_column_usage", `SELECT string_agg(view_name || ' ' || column_name, E'\n') FROM information_schema.view_column_usage`},
		{"pg_get_indexdef", `SELECT string_agg(pg_get_indexdef(x), E'\n') FROM unnest('` + indOids + `'::oid[]) x`},
		{"pg_get_constraintdef", `SELECT string_agg(pg_get_constraintdef(x), E'\n') FROM unnest('` + conOids + `'::oid[]) x`},
		{"pg_get_triggerdef", `SELECT string_agg(pg_get_triggerdef(x), E'\n') FROM unnest('` + trigOids + `'::oid[]) x`},
		{"pg_describe_object", `SELECT string_agg(pg_describe_object('pg_class'::regclass, ` + bv + `, x), E'\n') FROM generate_series(0, 3) x`},
		{"pg_identify_object", `SELECT string_agg(pg_identify_object('pg_class'::regclass, ` + bv + `, x)::text, E'\n') FROM generate_series(0, 3) x`},
		{"pg_identify_object_as_address", `SELECT string_agg(pg_identify_object_as_address('pg_class'::regclass, ` + bv + `, x)::text, E'\n') FROM generate_series(0, 3) x`},
		{"col_description", `SELECT string_agg(col_description(` + bv + `, x), E'\n') FROM generate_series(1, 3) x`},
	}
	// Every catalogue relation whole, each row as text.
	for _, r := range append(append([]string{}, catalogPrivate...), catalogFiltered...) {
		probes = append(probes, struct{ name, sql string }{r + " (whole)", `SELECT string_agg(x::text, E'\n') FROM ` + r + ` x`})
	}
	c := a.connect(t, "")
	for _, p := range probes {
		for _, via := range []string{"api", "login"} {
			t.Run(p.name+"/"+via, func(t *testing.T) {
				var text string
				var err error
				if via == "api" {
					var out []string
					out, err = a.apiQuery(ctx, s, p.sql)
					text = strings.Join(out, "\n")
				} else {
					var got *string
					err = c.QueryRow(ctx, p.sql).Scan(&got)
					if got != nil {
						text = *got
					}
				}
				if err != nil {
					// Refusing the whole catalogue entry is private too.
					if sqlState(err) != "42501" {
						t.Fatalf("%s: %v", p.name, err)
					}
					return
				}
				for _, sec := range secrets {
					if strings.Contains(text, sec) {
						t.Errorf("%s shows tenant B's %q to tenant A's role", p.name, sec)
					}
				}
			})
		}
	}
	// The private ones are refused outright; the filtered ones answer and
	// list A's own view and column, so tools keep a metadata path.
	for _, r := range catalogPrivate {
		if _, err := c.Exec(ctx, "SELECT 1 FROM "+r+" LIMIT 1"); sqlState(err) != "42501" {
			t.Errorf("%s: %v, want permission denied (42501)", r, err)
		}
	}
	var own string
	if err := c.QueryRow(ctx, `SELECT string_agg(table_name || '.' || column_name, ' ') FROM information_schema.columns
		WHERE table_schema = $1`, a.login.Schema).Scan(&own); err != nil || !strings.Contains(own, a.table+"."+a.column) {
		t.Errorf("information_schema.columns lists %q (%v), want A's %s.%s", own, err, a.table, a.column)
	}
	// A's own views answer with their column names, through the API and
	// a login, a whole row (the view's row type) included.
	ownView := pgx.Identifier{a.login.Schema, a.table}.Sanitize()
	cur, err := s.OpenSQL(ctx, storage.SQLQuery{Tenant: a.tenant, SchemaID: a.id, SQL: "SELECT *, v FROM " + ownView + " v", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cur.Columns(), ","); got != "entity_id,"+a.column+",v" {
		t.Errorf("API columns %q", got)
	}
	cur.Close()
	rows, err := c.Query(ctx, "SELECT *, v FROM "+ownView+" v")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	rows.Close()
	if err := rows.Err(); err != nil || strings.Join(names, ",") != "entity_id,"+a.column+",v" {
		t.Errorf("login columns %v (%v)", names, err)
	}
}

// TestSQLTenantLoginLimits (issue 23 item 6): with the issued
// credentials a session that turns read-only off still cannot write
// (temporary tables included), and a statement running past the limit
// is cancelled by svc even when the session set statement_timeout = 0; a
// transaction left idle past the limit is ended.
func TestSQLTenantLoginLimits(t *testing.T) {
	db := openTest(t)
	const limit = time.Second
	s := db.SQLSchemas(limit)
	ctx := context.Background()
	a := newSecTenant(t, s, "limits-tenant", "limq")
	schema := pgx.Identifier{a.login.Schema}.Sanitize()

	t.Run("read-only off cannot write", func(t *testing.T) {
		c := a.connect(t, "")
		for _, off := range []string{"SET default_transaction_read_only = off", "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"} {
			if _, err := c.Exec(ctx, off); err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{
				"CREATE TEMPORARY TABLE t (a int)",
				"CREATE TEMPORARY VIEW v AS SELECT 1",
				"CREATE TABLE pg_temp.t (a int)",
				"CREATE TABLE public.t (a int)",
				"CREATE TABLE " + schema + ".t (a int)",
				"CREATE TABLE svc_sql.t (a int)",
				"CREATE SCHEMA s",
				"CREATE FUNCTION " + schema + ".f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
				"SELECT lo_create(0)",
				"SELECT lo_creat(-1)",
				"SELECT lo_from_bytea(0, 'x')",
				"SELECT pg_notify('svc', 'x')",
				"SELECT pg_logical_emit_message(true, 'svc', 'x')",
			} {
				_, err := c.Exec(ctx, w)
				if sqlState(err) != "42501" {
					t.Errorf("after %q, %q: %v, want permission denied (42501)", off, w, err)
				}
			}
		}
	})

	t.Run("statement_timeout 0 is cancelled", func(t *testing.T) {
		c := a.connect(t, "")
		if _, err := c.Exec(ctx, "SET statement_timeout = 0"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, "SELECT pg_sleep(600)")
			done <- err
		}()
		select {
		case err := <-done:
			if sqlState(err) != "57014" {
				t.Fatalf("long statement ended with %v, want cancelled (57014)", err)
			}
		case <-time.After(60 * time.Second):
			// Unblock the goroutine before failing.
			c.PgConn().CancelRequest(context.Background())
			<-done
			t.Fatal("a statement with statement_timeout = 0 ran 60 s past a 1 s limit")
		}
		var n int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("the session stays usable after the cancel: %v", err)
		}
	})

	t.Run("idle transaction is ended", func(t *testing.T) {
		c := a.connect(t, "")
		if _, err := c.Exec(ctx, "SET idle_in_transaction_session_timeout = 0"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "BEGIN; SELECT count(*) FROM "+pgx.Identifier{a.table}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		// The transaction holds a lock on svc's entities table; svc ends
		// the session, which this read sees as the connection closing.
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		err := c.PgConn().WaitForNotification(wctx)
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a transaction idle past the limit stayed open: %v", err)
		}
	})

	t.Run("session in another database is ended", func(t *testing.T) {
		c := a.connect(t, "postgres")
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		err := c.PgConn().WaitForNotification(wctx)
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a session of the schema role in another database stayed open: %v", err)
		}
	})
}

// TestSQLRoleRightsRefused (issue 23 item 2): when PUBLIC still holds a
// right 0034 or 0035 takes back (svc's role was no superuser when they
// ran), the check refuses with a *storage.SQLRightsError naming each
// right and the migrations to apply; the role here is given each right
// directly, which has_*_privilege counts the same way.
func TestSQLRoleRightsRefused(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	role := fmt.Sprintf("svc_rightstest_%d", time.Now().UnixNano())
	for _, q := range []string{"DROP ROLE IF EXISTS " + role, "CREATE ROLE " + role} {
		if _, err := db.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		db.pool.Exec(context.Background(), "DROP OWNED BY "+role)
		db.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	cases := []struct{ grant, left string }{
		{"", ""},
		{"GRANT SELECT ON pg_catalog.pg_class TO " + role, "SELECT ON pg_catalog.pg_class"},
		{"GRANT SELECT ON pg_catalog.pg_stat_user_tables TO " + role, "SELECT ON pg_catalog.pg_stat_user_tables"},
		{"GRANT EXECUTE ON FUNCTION pg_catalog.pg_describe_object(oid, oid, integer) TO " + role, "EXECUTE ON FUNCTION pg_describe_object(oid,oid,integer)"},
		{"GRANT EXECUTE ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO " + role, "EXECUTE ON FUNCTION pg_advisory_lock(bigint)"},
	}
	for _, c := range cases {
		t.Run(c.left, func(t *testing.T) {
			if c.grant != "" {
				if _, err := db.pool.Exec(ctx, c.grant); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := db.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			err = checkRoleRights(ctx, tx, role)
			if c.left == "" {
				if err != nil {
					t.Fatalf("no right left: %v", err)
				}
				return
			}
			var re *storage.SQLRightsError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want *storage.SQLRightsError", err)
			}
			if !strings.Contains(strings.Join(re.Left, "; "), c.left) {
				t.Errorf("left %v, want %q among them", re.Left, c.left)
			}
			if !strings.Contains(err.Error(), "0035_sql_catalog_private.sql") || !strings.Contains(err.Error(), "0034_sql_tenant_hardening.sql") {
				t.Errorf("message names no migration: %v", err)
			}
		})
	}
}

// TestSQLNonSuperuserMigrates (issue 23 item 2): with svc's role no
// superuser (a database owner with CREATEROLE), every migration still
// applies (0034 used to fail on lo_import, no PUBLIC right to begin with),
// the revocations change nothing, and saving a SQL schema is refused with
// a *storage.SQLRightsError naming the migrations an operator applies as
// a superuser; nothing is created.
func TestSQLNonSuperuserMigrates(t *testing.T) {
	t.Parallel() // see TestMain
	su := openTest(t)
	ctx := context.Background()
	name := fmt.Sprintf("svc_nonsu_%d", time.Now().UnixNano())
	for _, q := range []string{"CREATE ROLE " + name + " LOGIN CREATEROLE PASSWORD 'nonsu'", "CREATE DATABASE " + name + " OWNER " + name} {
		if _, err := su.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		su.pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		su.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+name)
	})
	u, err := url.Parse(testDBURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "nonsu")
	u.Path = "/" + name
	o := testOptions()
	o.URL = u.String()
	db, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("migrating as a role that is no superuser: %v", err)
	}
	defer db.Close()
	s := db.SQLSchemas(10 * time.Second)
	rec := &storage.SQLSchema{Tenant: "nonsu-tenant", ID: uuid.Must(uuid.NewUUID()).String(), Name: "nonsu", Tables: []byte(`[]`)}
	err = s.SaveSQLSchema(ctx, rec, []storage.SQLView{{Name: "t", Model: storage.ModelKey{Name: "m", Version: 1}, Path: "json",
		Columns: []storage.SQLColumn{{Name: "entity", Category: "SPECIAL", Key: "JSON"}}}})
	var re *storage.SQLRightsError
	if !errors.As(err, &re) {
		t.Fatalf("saving: %v, want *storage.SQLRightsError", err)
	}
	left := strings.Join(re.Left, ", ")
	for _, want := range []string{"SELECT ON pg_catalog.pg_class", "EXECUTE ON FUNCTION pg_advisory_lock(bigint)", "SELECT ON pg_catalog.pg_rewrite"} {
		if !strings.Contains(left, want) {
			t.Errorf("left %s, want %q among them", left, want)
		}
	}
	var n int
	if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM sql_schemas").Scan(&n); err != nil || n != 0 {
		t.Errorf("sql_schemas holds %d rows (%v), want none", n, err)
	}

	// An operator applies the migrations as a superuser: the rights are
	// taken back, but svc's role still cannot create the schema's own
	// database (no CREATEDB), then postgres_fdw in it (no superuser).
	// Each save is refused with a *storage.SQLDatabaseError naming what
	// is needed, nothing is left behind, and svc never falls back to
	// views in its own database.
	suDB, err := pgx.Connect(ctx, strings.Replace(testDBURL, "/"+strings.TrimPrefix(mustURL(t, testDBURL).Path, "/"), "/"+name, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer suDB.Close(ctx)
	for _, f := range []string{"0034_sql_tenant_hardening.sql", "0035_sql_catalog_private.sql", "0038_sql_tenant_databases.sql"} {
		b, err := fs.ReadFile(migrations.Postgres, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := suDB.Exec(ctx, string(b), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s as a superuser: %v", f, err)
		}
	}
	for _, step := range []struct{ grant, need string }{
		{"", "CREATEDB"},
		{"ALTER ROLE " + name + " CREATEDB", "postgres_fdw"},
	} {
		if step.grant != "" {
			if _, err := su.pool.Exec(ctx, step.grant); err != nil {
				t.Fatal(err)
			}
		}
		err = s.SaveSQLSchema(ctx, rec, []storage.SQLView{{Name: "t", Model: storage.ModelKey{Name: "m", Version: 1}, Path: "json",
			Columns: []storage.SQLColumn{{Name: "entity", Category: "SPECIAL", Key: "JSON"}}}})
		var de *storage.SQLDatabaseError
		if !errors.As(err, &de) || !strings.Contains(de.Need, step.need) {
			t.Fatalf("saving with the rights revoked: %v, want *storage.SQLDatabaseError needing %s", err, step.need)
		}
		var left int
		if err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM sql_schemas) + (SELECT count(*) FROM pg_database WHERE datname LIKE 'svc\_sqld\_%' AND datdba = (SELECT oid FROM pg_roles WHERE rolname = $1))
			+ (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'svc\_sqlv\_%')`, name).Scan(&left); err != nil || left != 0 {
			t.Errorf("after the refusal %d records, databases or view schemas are left (%v)", left, err)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
