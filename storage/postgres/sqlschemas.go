package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/storage"
)

// SQLSchemas is the PostgreSQL storage.SQLSchemas and storage.SQLRunner.
type SQLSchemas struct {
	db *DB
	// QueryRoleSettings are applied to every schema role at save time.
	StatementTimeout time.Duration
}

// SQLSchemas returns the SQL schema store of db; statementTimeout becomes
// each schema role's statement_timeout (psql and BI sessions included).
//
// The first call also starts the engine's watchdog over those sessions
// with statementTimeout as the limit (sqlschema_watchdog.go): a session
// may change its own statement_timeout, the watchdog still cancels it.
func (db *DB) SQLSchemas(statementTimeout time.Duration) *SQLSchemas {
	db.sqlWatchOnce.Do(func() { db.sqlWatch.start(db, roleTimeout(statementTimeout)) })
	return &SQLSchemas{db: db, StatementTimeout: statementTimeout}
}

// roleTimeout is the statement limit of schema roles: the configured one,
// or 30 s when unset.
func roleTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 30 * time.Second
	}
	return d
}

var (
	_ storage.SQLSchemas = (*SQLSchemas)(nil)
	_ storage.SQLRunner  = (*SQLSchemas)(nil)
)

// pgNames draws the PostgreSQL schema and role of a new SQL schema. Every
// role can list every schema and role of the cluster (pg_namespace,
// pg_roles), so the names are random: nothing in them says whose they are
// (an earlier hash of tenant and schema id could be confirmed by anyone
// who knew both). A saved schema keeps the names it was given.
func pgNames() (schema, role string, err error) {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("postgres: naming the SQL schema: %w", err)
	}
	x := hex.EncodeToString(b[:])
	return "svc_sql_" + x, "svc_sqlr_" + x, nil
}

const sqlSchemaCols = `tenant, id::text, name, tables, created_ns, updated_ns`

func scanSQLSchema(row pgx.Row) (*storage.SQLSchema, error) {
	var r storage.SQLSchema
	var created, updated int64
	if err := row.Scan(&r.Tenant, &r.ID, &r.Name, &r.Tables, &created, &updated); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = unixNano(created), unixNano(updated)
	return &r, nil
}

func (s *SQLSchemas) GetSQLSchema(ctx context.Context, tenant, id string) (*storage.SQLSchema, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	r, err := scanSQLSchema(c.QueryRow(ctx, `SELECT `+sqlSchemaCols+` FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid`, tenant, id))
	return r, notFoundOr(err, "get SQL schema")
}

func (s *SQLSchemas) GetSQLSchemaByName(ctx context.Context, tenant, name string) (*storage.SQLSchema, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	r, err := scanSQLSchema(c.QueryRow(ctx, `SELECT `+sqlSchemaCols+` FROM sql_schemas WHERE tenant = $1 AND name = $2`, tenant, name))
	return r, notFoundOr(err, "get SQL schema by name")
}

func (s *SQLSchemas) ListSQLSchemas(ctx context.Context, tenant string) ([]*storage.SQLSchema, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+sqlSchemaCols+` FROM sql_schemas WHERE tenant = $1 ORDER BY name`, tenant)
	if err != nil {
		return nil, fmt.Errorf("postgres: list SQL schemas: %w", err)
	}
	defer rows.Close()
	var out []*storage.SQLSchema
	for rows.Next() {
		r, err := scanSQLSchema(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list SQL schemas: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SaveSQLSchema upserts the record and rebuilds its views and role grants
// in one transaction: a 200 means the views answer now, and a failure
// leaves the previous views in place.
func (s *SQLSchemas) SaveSQLSchema(ctx context.Context, r *storage.SQLSchema, views []storage.SQLView) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		now := time.Now().UnixNano()
		schema, role, err := pgNames()
		if err != nil {
			return err
		}
		var created int64
		err = tx.QueryRow(ctx, `INSERT INTO sql_schemas (tenant, id, name, tables, pg_schema, pg_role, created_ns, updated_ns)
			VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $7)
			ON CONFLICT (tenant, name) DO UPDATE SET tables = EXCLUDED.tables, updated_ns = EXCLUDED.updated_ns
			RETURNING id::text, pg_schema, pg_role, created_ns`,
			r.Tenant, r.ID, r.Name, r.Tables, schema, role, now).Scan(&r.ID, &schema, &role, &created)
		if err != nil {
			return fmt.Errorf("postgres: save SQL schema: %w", mapErr(err))
		}
		r.CreatedAt, r.UpdatedAt = unixNano(created), unixNano(now)
		if err := s.buildViews(ctx, tx, r.Tenant, schema, role, views); err != nil {
			return err
		}
		return nil
	})
}

// buildViews replaces the schema's views and makes sure its role exists
// with read access to exactly them.
func (s *SQLSchemas) buildViews(ctx context.Context, tx pgx.Tx, tenant, schema, role string, views []storage.SQLView) error {
	stmts := []string{
		"DROP SCHEMA IF EXISTS " + ident(schema) + " CASCADE",
		"CREATE SCHEMA " + ident(schema),
	}
	for _, v := range views {
		q, err := viewSQL(schema, tenant, v)
		if err != nil {
			return err
		}
		stmts = append(stmts, q)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: building SQL schema views: %w", err)
		}
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: looking up role: %w", err)
	}
	var grants []string
	if !exists {
		// LOGIN without a password until an admin asks for one; NOINHERIT
		// and no memberships, so the role reaches only what is granted.
		grants = append(grants, "CREATE ROLE "+ident(role)+" LOGIN NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT 8")
	}
	timeout := roleTimeout(s.StatementTimeout)
	grants = append(grants,
		"ALTER ROLE "+ident(role)+" SET search_path = "+ident(schema),
		"ALTER ROLE "+ident(role)+" SET default_transaction_read_only = on",
		"ALTER ROLE "+ident(role)+" SET jit = off", // see OpenSQL
		fmt.Sprintf("ALTER ROLE %s SET statement_timeout = %d", ident(role), timeout.Milliseconds()),
		"GRANT USAGE ON SCHEMA "+ident(schema)+" TO "+ident(role),
		"GRANT SELECT ON ALL TABLES IN SCHEMA "+ident(schema)+" TO "+ident(role),
	)
	for _, q := range grants {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: granting the SQL schema role: %w", err)
		}
	}
	return checkRoleRights(ctx, tx, role)
}

// DeleteSQLSchema drops the record, its views and its role. The role's
// sessions are ended first (svc's pooled ones and direct logins with the
// issued credentials): a session inside a transaction over a view would
// otherwise hold DROP SCHEMA until it ended. What still holds the role —
// an object it owns (made before docs/decisions/0033-sql-tenant-isolation.md
// took the right away, or given to it by an administrator), a session that
// could not be ended and keeps a lock — comes back as
// storage.SQLSchemaInUseError and nothing is deleted.
func (s *SQLSchemas) DeleteSQLSchema(ctx context.Context, tenant, id string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	var role string
	if err := c.QueryRow(ctx, `SELECT pg_role FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid`, tenant, id).Scan(&role); err != nil {
		return notFoundOr(err, "delete SQL schema")
	}
	s.db.rolePools().forget(role)
	unended := endSessions(ctx, c, role)
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		var schema string
		err := tx.QueryRow(ctx, `DELETE FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid RETURNING pg_schema, pg_role`,
			tenant, id).Scan(&schema, &role)
		if err != nil {
			return notFoundOr(err, "delete SQL schema")
		}
		// A session that could not be ended may hold a lock on a view:
		// give up soon rather than hold this connection (and the caller)
		// for the statement timeout.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
			return fmt.Errorf("postgres: dropping SQL schema: %w", err)
		}
		if _, err := tx.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(schema)+" CASCADE"); err != nil {
			return inUse(err, unended, "dropping SQL schema views")
		}
		if _, err := tx.Exec(ctx, "DROP ROLE IF EXISTS "+ident(role)); err != nil {
			return inUse(err, unended, "dropping SQL schema role")
		}
		return nil
	})
	// Connections leased while the schema was being dropped close as
	// their queries end.
	s.db.rolePools().forget(role)
	return err
}

// endSessions terminates role's sessions, waiting for each to exit (its
// locks and temporary objects go with it), and returns how many it could
// not end (svc's user may lack the right to signal them).
func endSessions(ctx context.Context, c *pgxpool.Conn, role string) int {
	rows, err := c.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE usename = $1 AND pid <> pg_backend_pid()`, role)
	if err != nil {
		return 0
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0
	}
	unended := 0
	for _, pid := range pids {
		var ok bool
		if err := c.QueryRow(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ok); err != nil || !ok {
			unended++
		}
	}
	return unended
}

// inUse reports what keeps a schema's role from being dropped as
// storage.SQLSchemaInUseError, naming it; other failures stay internal.
func inUse(err error, unended int, what string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "2BP01": // dependent_objects_still_exist: the detail lists them
			return &storage.SQLSchemaInUseError{Reason: "the schema's PostgreSQL role owns database objects (" +
				strings.ReplaceAll(pe.Detail, "\n", "; ") + "); remove them, then delete the schema again"}
		case "55P03": // lock_not_available
			return &storage.SQLSchemaInUseError{Reason: fmt.Sprintf("a session of the schema's PostgreSQL role holds a lock on its views "+
				"(%d session(s) could not be ended); end it, then delete the schema again", unended)}
		}
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}
