package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// roleSection is the heading of `help sql` whose lines this test checks.
const roleSection = "## WHAT A SCHEMA ROLE CAN AND CANNOT DO"

// helpRoleSentences reads the bullet lines of that section.
func helpRoleSentences(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../help/topics/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), roleSection+"\n")
	if !ok {
		t.Fatalf("help sql has no %q section", roleSection)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		if s, ok := strings.CutPrefix(l, "- "); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestSQLHelpRoleSentences (issue 23 item 14): every line `help sql`
// states about what a schema role can and cannot see or do has a check
// here, run against PostgreSQL with a login made from the issued
// credentials (and the POST /sql/query path where the line is about it),
// and every check has its line.
func TestSQLHelpRoleSentences(t *testing.T) {
	db := openTest(t)
	const limit = time.Second
	s := db.SQLSchemas(limit)
	ctx := context.Background()
	ab := newSecTenants(t, s, [2]string{"help-alpha-tenant", "helpa"}, [2]string{"help-bravo-tenant", "helpb"})
	a, b := ab[0], ab[1]
	// One entity of A's model for each tenant: A's views must show A's.
	for _, tenant := range []string{a.tenant, b.tenant} {
		if _, err := db.pool.Exec(ctx, `INSERT INTO entities (tenant, id, model_name, model_version, state, version, tx_id, created_ns, updated_ns, doc)
			VALUES ($1, $2, $3, 1, 'CREATED', 1, $2, 1, 1, jsonb_build_object($4::text, $1::text))`,
			tenant, uuid.New(), a.model, a.field); err != nil {
			t.Fatal(err)
		}
	}
	own := pgx.Identifier{a.table}.Sanitize()
	schema := pgx.Identifier{a.login.Schema}.Sanitize()
	c := a.connect(t, "")

	refused := func(t *testing.T, sqls ...string) {
		t.Helper()
		for _, q := range sqls {
			if _, err := c.Exec(ctx, q); sqlState(err) != "42501" {
				t.Errorf("%s: %v, want permission denied (42501)", q, err)
			}
		}
	}
	text := func(t *testing.T, q string) string {
		t.Helper()
		var v string
		if err := c.QueryRow(ctx, q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	ended := func(t *testing.T, c *pgx.Conn) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := c.PgConn().WaitForNotification(wctx); err == nil || wctx.Err() != nil {
			t.Fatalf("the session stayed open: %v", err)
		}
	}

	checks := map[string]func(t *testing.T){
		"The role can read the views of its own schema, and they show its own tenant's entities only.": func(t *testing.T) {
			if got := text(t, "SELECT string_agg("+pgx.Identifier{a.column}.Sanitize()+", ',') FROM "+own); got != a.tenant {
				t.Fatalf("own view shows %q, want only %q", got, a.tenant)
			}
		},
		"The role logs in to its schema's own database only: svc's database and other schemas' databases refuse it, and its own holds none of svc's tables (`entities`, `entity_revisions`, `sql_schemas`) and no other schema's views.": func(t *testing.T) {
			u, err := url.Parse(testDBURL)
			if err != nil {
				t.Fatal(err)
			}
			svcDB := strings.TrimPrefix(u.Path, "/")
			for _, d := range []string{svcDB, b.login.Database} {
				u.Path = "/" + d
				u.User = url.UserPassword(a.login.Role, a.login.Password)
				if cc, err := pgx.Connect(ctx, u.String()); err == nil {
					cc.Close(ctx)
					t.Errorf("logged in to database %s", d)
				} else if sqlState(err) != "42501" {
					t.Errorf("login to database %s: %v, want permission denied (42501)", d, err)
				}
			}
			if d := text(t, "SELECT current_database()"); d != a.login.Database || d == svcDB {
				t.Fatalf("the role's session is in %s", d)
			}
			for _, q := range []string{"SELECT 1 FROM public.entities", "SELECT 1 FROM public.entity_revisions", "SELECT 1 FROM public.sql_schemas",
				"SELECT 1 FROM " + pgx.Identifier{b.login.Schema, b.table}.Sanitize()} {
				if _, err := c.Exec(ctx, q); sqlState(err) != "42P01" && sqlState(err) != "3F000" {
					t.Errorf("%s: %v, want no such relation", q, err)
				}
			}
		},
		"The role cannot `SET ROLE` to any other role: it is a member of none.": func(t *testing.T) {
			refused(t, "SET ROLE postgres", "SET ROLE "+pgx.Identifier{b.login.Role}.Sanitize())
			if n := text(t, "SELECT count(*)::text FROM pg_auth_members WHERE member = current_user::regrole"); n != "0" {
				t.Fatalf("member of %s roles", n)
			}
		},
		"Sessions start read-only, and a session that turns `default_transaction_read_only` off still cannot write: no tables, temporary tables or views, schemas, functions or large objects.": func(t *testing.T) {
			if v := text(t, "SHOW default_transaction_read_only"); v != "on" {
				t.Fatalf("default_transaction_read_only = %s", v)
			}
			if _, err := c.Exec(ctx, "SET default_transaction_read_only = off"); err != nil {
				t.Fatal(err)
			}
			defer c.Exec(ctx, "RESET default_transaction_read_only")
			refused(t, "CREATE TABLE public.t (a int)", "CREATE TABLE "+schema+".t (a int)", "CREATE TEMPORARY TABLE t (a int)",
				"CREATE TEMPORARY VIEW v AS SELECT 1", "CREATE SCHEMA s", "CREATE FUNCTION "+schema+".f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
				"SELECT lo_create(0)", "SELECT lo_from_bytea(0, 'x')")
		},
		"The role cannot call `pg_notify` or `pg_logical_emit_message`; the `NOTIFY` command itself cannot be revoked in PostgreSQL and works from a direct login, read-only or not (svc listens on no channel).": func(t *testing.T) {
			refused(t, "SELECT pg_notify('c', 'x')", "SELECT pg_logical_emit_message(false, 'p', 'x')")
			if _, err := c.Exec(ctx, "NOTIFY c, 'x'"); err != nil {
				t.Errorf("NOTIFY in a read-only session: %v", err)
			}
			if n := countInCode(t, "LISTEN "); n != 0 {
				t.Errorf("svc's code LISTENs (%d places): revisit this line", n)
			}
		},
		"Once a session turns read-only off, the role can change its own password and session defaults (`ALTER ROLE CURRENT_USER`), as every PostgreSQL role can: svc's limits do not depend on those defaults, and `POST {ctx}/sql/credentials/rotate` gives svc's own access back.": func(t *testing.T) {
			// A tenant of its own: changing the password breaks svc's pool
			// for that schema until rotation.
			d := newSecTenant(t, s, "help-delta-tenant", "helpd")
			c := d.connect(t, "")
			if _, err := c.Exec(ctx, "SET default_transaction_read_only = off"); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"ALTER ROLE CURRENT_USER SET statement_timeout = 0", "ALTER ROLE CURRENT_USER SET default_transaction_read_only = off",
				"ALTER ROLE CURRENT_USER PASSWORD 'changed-by-the-tenant'"} {
				if _, err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			// A new session gets the changed defaults, and is still cancelled
			// at the limit and still cannot write.
			d.login.Password = "changed-by-the-tenant"
			c2 := d.connect(t, "")
			wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			if _, err := c2.Exec(wctx, "SELECT pg_sleep(600)"); wctx.Err() != nil || sqlState(err) != "57014" {
				t.Fatalf("long statement with the changed defaults: %v", err)
			}
			if _, err := c2.Exec(ctx, "CREATE TEMPORARY TABLE t (a int)"); sqlState(err) != "42501" {
				t.Fatalf("temporary table with the changed defaults: %v", err)
			}
			if _, err := d.apiQuery(ctx, s, "SELECT current_setting('transaction_read_only')"); err == nil {
				t.Log("svc's pool kept a connection made with the old password")
			}
			if _, err := s.SQLCredentials(ctx, d.tenant, d.id, true); err != nil {
				t.Fatal(err)
			}
			if out, err := d.apiQuery(ctx, s, "SELECT current_setting('transaction_read_only')"); err != nil || strings.Join(out, "") != "on" {
				t.Fatalf("after rotation: %v %v", out, err)
			}
		},
		"The role cannot take advisory locks: every `pg_advisory_*` and `pg_try_advisory_*` function is refused, so it cannot hold a lock svc or another tenant waits for.": func(t *testing.T) {
			// TestSQLTenantAdvisoryLocks runs every form against svc's own
			// locks; here, that no such function is left to the role.
			if n := text(t, `SELECT count(*)::text FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
				AND (p.proname LIKE 'pg\_advisory\_%' OR p.proname LIKE 'pg\_try\_advisory\_%') AND has_function_privilege(p.oid, 'EXECUTE')`); n != "0" {
				t.Fatalf("%s advisory-lock functions executable", n)
			}
			refused(t, "SELECT pg_advisory_lock(1)", "SELECT pg_try_advisory_xact_lock_shared(1, 2)")
		},
		"The role cannot read any view's definition: `pg_get_viewdef`, `pg_get_ruledef` and `pg_rewrite` are refused, and so are `pg_views.definition` and `information_schema.views.view_definition`.": func(t *testing.T) {
			refused(t, "SELECT pg_get_viewdef('"+a.login.Schema+"."+a.table+"'::regclass)", "SELECT pg_get_ruledef(0)", "SELECT 1 FROM pg_rewrite",
				"SELECT definition FROM pg_views", "SELECT view_definition FROM information_schema.views")
		},
		"A statement running longer than `SVC_SQL_QUERY_TIMEOUT` is cancelled by svc, even when the session set its own `statement_timeout` to 0.": func(t *testing.T) {
			c := a.connect(t, "")
			if _, err := c.Exec(ctx, "SET statement_timeout = 0"); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			_, err := c.Exec(wctx, "SELECT pg_sleep(600)")
			if wctx.Err() != nil || sqlState(err) != "57014" {
				t.Fatalf("long statement: %v, want cancelled by svc", err)
			}
		},
		"svc ends a session that stays idle inside a transaction longer than `SVC_SQL_QUERY_TIMEOUT`, and any session of the role connected to another database of the server.": func(t *testing.T) {
			idle := a.connect(t, "")
			if _, err := idle.Exec(ctx, "SET idle_in_transaction_session_timeout = 0; BEGIN; SELECT 1 FROM "+own); err != nil {
				t.Fatal(err)
			}
			ended(t, idle)
			ended(t, a.connect(t, "postgres"))
		},
		"Role, schema and database names are random (`svc_sqlr_`, `svc_sql_` or `svc_sqld_` and 20 hex digits) and carry nothing of the tenant, schema or model names.": func(t *testing.T) {
			for _, st := range []*secTenant{a, b} {
				if !regexp.MustCompile(`^svc_sqlr_[0-9a-f]{20}$`).MatchString(st.login.Role) ||
					!regexp.MustCompile(`^svc_sql_[0-9a-f]{20}$`).MatchString(st.login.Schema) ||
					!regexp.MustCompile(`^svc_sqld_[0-9a-f]{20}$`).MatchString(st.login.Database) ||
					st.login.Role[len("svc_sqlr_"):] == hashName(st.tenant, st.id) {
					t.Fatalf("names %q %q", st.login.Role, st.login.Schema)
				}
			}
		},
		"The role cannot read the catalogue tables and views that name relations, columns, types, constraints, indexes, triggers, policies or comments (`pg_class`, `pg_attribute`, `pg_type`, `pg_constraint`, `pg_index`, `pg_trigger`, `pg_policy`, `pg_description`, `pg_tables`, `pg_indexes`, `pg_stat_*_tables`, `pg_statio_*` and the like), nor call `pg_get_indexdef`, `pg_get_constraintdef`, `pg_get_triggerdef`, `pg_describe_object` or `pg_identify_object`; `information_schema` lists its own views and columns only, and is where tools find them (psql's `\\d` does not work).": func(t *testing.T) {
			// TestSQLTenantCatalogPrivate reads each whole; here, that
			// every one is refused and information_schema answers.
			for _, r := range catalogPrivate {
				refused(t, "SELECT 1 FROM "+r+" LIMIT 1")
			}
			refused(t, "SELECT pg_get_indexdef(0)", "SELECT pg_get_constraintdef(0)", "SELECT pg_get_triggerdef(0)",
				"SELECT pg_describe_object(0, 0, 0)", "SELECT pg_identify_object(0, 0, 0)")
			got := text(t, `SELECT string_agg(table_schema || '.' || table_name || '.' || column_name, ' ') FROM information_schema.columns`)
			if !strings.Contains(got, a.login.Schema+"."+a.table+"."+a.column) {
				t.Errorf("information_schema.columns lacks A's own column: %q", got)
			}
			if strings.Contains(got, b.login.Schema) || strings.Contains(got, b.column) {
				t.Errorf("information_schema.columns lists B's: %q", got)
			}
		},
		"As every PostgreSQL role can, the role can list the server's roles and databases by their random names (`pg_roles`, `pg_database`), and print the name of any relation or type of its database from its number (`16384::regclass`), which PostgreSQL does not check; its database holds only its own schema's objects, so counting through numbers names nothing of another tenant's.": func(t *testing.T) {
			// TestSQLTenantOidNamesPrivate counts through every oid of the
			// server; here, the names listed and that the count finds A's.
			var top int64
			for _, q := range []interface {
				QueryRow(context.Context, string, ...any) pgx.Row
			}{db.pool, svcConnTo(t, a.login.Database), svcConnTo(t, b.login.Database)} {
				var m int64
				if err := q.QueryRow(ctx, `SELECT greatest((SELECT max(oid) FROM pg_class), (SELECT max(oid) FROM pg_type))::bigint`).Scan(&m); err != nil {
					t.Fatal(err)
				}
				top = max(top, m)
			}
			got := text(t, `SELECT (SELECT string_agg(rolname, ' ') FROM pg_roles) || ' ' || (SELECT string_agg(datname, ' ') FROM pg_database)`)
			// In statements of 2 000 oids, each far inside the 1 s limit: a
			// statement of 20 000 ran past it once on a machine at load 32.
			const step = 2000
			for from := int64(16384); from <= top; from += step {
				got += " " + text(t, `SELECT coalesce(string_agg(x::oid::regclass::text || ' ' || x::oid::regtype::text, ' '), '') FROM generate_series(`+
					strconv.FormatInt(from, 10)+`, `+strconv.FormatInt(from+step-1, 10)+`) x`)
			}
			for _, want := range []string{b.login.Role, b.login.Database, a.table} {
				if !strings.Contains(got, want) {
					t.Errorf("catalogue does not list %q", want)
				}
			}
			for _, secret := range []string{b.tenant, b.schemaName, b.table, b.column, b.field, b.model} {
				if strings.Contains(got, secret) {
					t.Errorf("catalogue names tenant B's %q", secret)
				}
			}
		},
		"Through `POST {ctx}/sql/query` each request runs one statement in a read-only transaction, and the connection is reset (`DISCARD ALL`) before it serves another request.": func(t *testing.T) {
			if _, err := a.apiQuery(ctx, s, "SELECT 1; SELECT 2"); err == nil {
				t.Error("two statements ran")
			}
			if out, err := a.apiQuery(ctx, s, "SELECT current_setting('transaction_read_only')"); err != nil || strings.Join(out, "") != "on" {
				t.Errorf("read-only: %v %v", out, err)
			}
			if _, err := a.apiQuery(ctx, s, "PREPARE left_behind AS SELECT 1"); err != nil {
				t.Fatal(err)
			}
			// Requests one after another reuse the pool's idle connection.
			for i := 0; i < 4; i++ {
				if out, err := a.apiQuery(ctx, s, "SELECT count(*) FROM pg_prepared_statements"); err != nil || strings.Join(out, "") != "0" {
					t.Fatalf("after PREPARE, request %d sees %v prepared statements (%v)", i, out, err)
				}
			}
		},
	}

	lines := helpRoleSentences(t)
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
		check, ok := checks[l]
		if !ok {
			t.Errorf("help sql line has no check: %q", l)
			continue
		}
		t.Run(l[:min(len(l), 60)], check)
	}
	for l := range checks {
		if !seen[l] {
			t.Errorf("check without its help sql line: %q", l)
		}
	}
}

// hashName is how role names were derived before they were random.
func hashName(tenant, id string) string {
	h := sha256Hex(tenant + "\x00" + id)
	return h[:20]
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// countInCode counts the Go and SQL files of the repository that contain
// s outside tests.
func countInCode(t *testing.T, s string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(p, "_test.go") || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sql")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), s) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
