package fast

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/storage"
)

// TestSQLLegacySchemaMoved: a schema saved before each schema had a
// database of its own (views in svc's database, its role allowed to log
// in there, where counting through oids names every tenant's views) is
// moved at start (sqlschema.Service.MoveLegacy): afterwards its
// credentials name its own database, its views answer there, its role
// cannot log in to svc's database, and the old views are gone.
func TestSQLLegacySchemaMoved(t *testing.T) {
	t.Parallel()
	env := newSQLEnv(t, "postgres")
	env.lockedModel("A", "orders", 1, ordersSample)
	env.create("A", "orders", 1, ordersSample)
	env.call("A", "PUT", "/sql/schema/putDefault/shop", nil).ok(t)
	su := env.superuser(t)
	ctx := context.Background()
	u, err := url.Parse(env.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	svcDB := strings.TrimPrefix(u.Path, "/")

	// The layout before migration 0038, by hand: views in svc's database,
	// CONNECT for the role there, no database of its own.
	var role, schema, database, remote string
	if err := su.QueryRow(ctx, `SELECT pg_role, pg_schema, pg_database, remote_schema FROM sql_schemas WHERE tenant = 'A' AND name = 'shop'`).
		Scan(&role, &schema, &database, &remote); err != nil {
		t.Fatal(err)
	}
	id := pgx.Identifier{}
	q := func(s string) string { return (append(id, s)).Sanitize() }
	for _, s := range []string{
		"DROP DATABASE " + q(database) + " WITH (FORCE)",
		"DROP SCHEMA " + q(remote) + " CASCADE",
		"CREATE SCHEMA " + q(schema),
		"CREATE VIEW " + q(schema) + ".orders AS SELECT 'legacy' AS orderid",
		"GRANT USAGE ON SCHEMA " + q(schema) + " TO " + q(role),
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + q(schema) + " TO " + q(role),
		"GRANT CONNECT ON DATABASE " + q(svcDB) + " TO " + q(role),
		"UPDATE sql_schemas SET pg_database = NULL, remote_schema = NULL, fetch_role = NULL WHERE tenant = 'A' AND name = 'shop'",
	} {
		if _, err := su.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var before storage.SQLLogin
	env.call("A:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &before)
	if before.Database != svcDB {
		t.Fatalf("legacy credentials name %s, want svc's database %s", before.Database, svcDB)
	}
	wantRows(t, "legacy view", env.query("A", "shop", `SELECT orderid FROM orders`), `{"orderid":"legacy"}`)

	moved, err := env.sql.MoveLegacy(ctx)
	if err != nil || moved != 1 {
		t.Fatalf("MoveLegacy: %d %v, want 1 moved", moved, err)
	}
	var after storage.SQLLogin
	env.call("A:admin", "GET", "/sql/credentials?schemaName=shop", nil).ok(t).decode(t, &after)
	if after.Database == svcDB || after.Role != before.Role || after.Schema != before.Schema {
		t.Fatalf("after the move: %+v (before %+v)", after, before)
	}
	wantRows(t, "moved view", env.query("A", "shop", `SELECT orderid FROM orders`), `{"orderid":"A-1"}`)
	u.User = url.UserPassword(after.Role, after.Password)
	if c, err := pgx.Connect(ctx, u.String()); err == nil {
		c.Close(ctx)
		t.Error("the moved schema's role still logs in to svc's database")
	} else if pe, ok := errors.AsType[*pgconn.PgError](err); !ok || pe.Code != "42501" {
		t.Errorf("login to svc's database: %v, want permission denied (42501)", err)
	}
	var left int
	if err := su.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&left); err != nil || left != 0 {
		t.Errorf("the old views' schema is left in svc's database: %d %v", left, err)
	}
	if moved, err := env.sql.MoveLegacy(ctx); err != nil || moved != 0 {
		t.Errorf("second MoveLegacy: %d %v, want nothing to move", moved, err)
	}
}
