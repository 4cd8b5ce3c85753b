package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// DeleteSQLSchema drops the record, its views and its role.
func (s *SQLSchemas) DeleteSQLSchema(ctx context.Context, tenant, id string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	var role string
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		var schema string
		err := tx.QueryRow(ctx, `DELETE FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid RETURNING pg_schema, pg_role`,
			tenant, id).Scan(&schema, &role)
		if err != nil {
			return notFoundOr(err, "delete SQL schema")
		}
		if _, err := tx.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(schema)+" CASCADE"); err != nil {
			return fmt.Errorf("postgres: dropping SQL schema views: %w", err)
		}
		if _, err := tx.Exec(ctx, "DROP ROLE IF EXISTS "+ident(role)); err != nil {
			return fmt.Errorf("postgres: dropping SQL schema role: %w", err)
		}
		return nil
	})
	if err == nil {
		s.db.rolePools().forget(role)
	}
	return err
}
