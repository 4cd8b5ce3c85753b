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
	_ storage.SQLSchemas       = (*SQLSchemas)(nil)
	_ storage.SQLRunner        = (*SQLSchemas)(nil)
	_ storage.SQLSchemasToMove = (*SQLSchemas)(nil)
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

// SQLSchemasToMove lists the schemas saved before migration 0038, whose
// views are still in svc's database (storage.SQLSchemasToMove).
func (s *SQLSchemas) SQLSchemasToMove(ctx context.Context) ([]*storage.SQLSchema, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+sqlSchemaCols+` FROM sql_schemas WHERE pg_database IS NULL ORDER BY tenant, name`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list SQL schemas to move: %w", err)
	}
	defer rows.Close()
	var out []*storage.SQLSchema
	for rows.Next() {
		r, err := scanSQLSchema(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list SQL schemas to move: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SaveSQLSchema upserts the record and rebuilds the schema's views in its
// own database (sqlschema_tenantdb.go), creating that database on the
// first save. The views of svc's database and the record are written in
// one transaction and those of the schema's database in another; both
// commit only once every statement of both succeeded, the first one first,
// so a failure leaves the previous views in place and answering (the
// opaque views they read are dropped only after the switch).
func (s *SQLSchemas) SaveSQLSchema(ctx context.Context, r *storage.SQLSchema, views []storage.SQLView) (err error) {
	// Names: the saved schema's, or new random ones.
	schema, role, err := pgNames()
	if err != nil {
		return err
	}
	var oldRemote, oldDB *string
	isNew := false
	{
		c, err := s.db.acquire(ctx)
		if err != nil {
			return err
		}
		err = c.QueryRow(ctx, `SELECT pg_schema, pg_role, remote_schema, pg_database FROM sql_schemas WHERE tenant = $1 AND name = $2`,
			r.Tenant, r.Name).Scan(&schema, &role, &oldRemote, &oldDB)
		c.Release()
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			isNew = true
		case err != nil:
			return fmt.Errorf("postgres: save SQL schema: %w", err)
		}
	}
	database, fetch := tenantDBNames(role)
	remote, err := remoteSchemaName()
	if err != nil {
		return err
	}
	// The roles first, committed, so the schema's database can grant to
	// them; refused while svc's database still grants PUBLIC what a role
	// must not hold.
	createdRoles, err := s.ensureRoles(ctx, role, fetch, schema)
	if err != nil {
		return err
	}
	var createdDB bool
	defer func() {
		if err == nil || !isNew {
			return
		}
		// A first save that failed leaves nothing behind.
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, cerr := s.db.acquire(dctx)
		if cerr != nil {
			return
		}
		defer c.Release()
		if createdDB {
			_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+ident(database)+" WITH (FORCE)")
		}
		if createdRoles {
			_ = pgx.BeginFunc(dctx, c, func(tx pgx.Tx) error {
				if err := lockSvcDatabaseACL(dctx, tx); err != nil {
					return err
				}
				_, err := tx.Exec(dctx, "REVOKE ALL ON DATABASE "+ident(currentDB(dctx, c))+" FROM "+ident(fetch))
				return err
			})
			_, _ = c.Exec(dctx, "DROP ROLE IF EXISTS "+ident(fetch))
			_, _ = c.Exec(dctx, "DROP ROLE IF EXISTS "+ident(role))
		}
	}()
	exists, err := s.tenantDBExists(ctx, database)
	if err != nil {
		return err
	}
	if !exists {
		password, err := newPassword()
		if err != nil {
			return err
		}
		// The fetch role's password lives only in the user mapping.
		if err := s.exec(ctx, "ALTER ROLE "+ident(fetch)+" PASSWORD "+literal(password)); err != nil {
			return fmt.Errorf("postgres: setting the SQL schema fetch role's password: %w", err)
		}
		if err := s.createTenantDB(ctx, database, role, fetch, password); err != nil {
			return err
		}
		createdDB = true
	}
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tc, err := s.dialDatabase(ctx, database)
	if err != nil {
		return err
	}
	defer tc.Close(context.Background())
	svcTx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: save SQL schema: %w", err)
	}
	defer svcTx.Rollback(context.Background())
	dbTx, err := tc.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: save SQL schema: %w", err)
	}
	defer dbTx.Rollback(context.Background())

	// The row lock orders concurrent saves of one schema; the opaque views
	// to drop afterwards are those of the save before this one.
	err = svcTx.QueryRow(ctx, `SELECT remote_schema FROM sql_schemas WHERE tenant = $1 AND name = $2 FOR UPDATE`, r.Tenant, r.Name).Scan(&oldRemote)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: save SQL schema: %w", err)
	}
	now := time.Now().UnixNano()
	var created int64
	var gotRole string
	err = svcTx.QueryRow(ctx, `INSERT INTO sql_schemas (tenant, id, name, tables, pg_schema, pg_role, pg_database, fetch_role, remote_schema, created_ns, updated_ns)
		VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $10)
		ON CONFLICT (tenant, name) DO UPDATE SET tables = EXCLUDED.tables, updated_ns = EXCLUDED.updated_ns,
			pg_database = EXCLUDED.pg_database, fetch_role = EXCLUDED.fetch_role, remote_schema = EXCLUDED.remote_schema
		RETURNING id::text, pg_role, created_ns`,
		r.Tenant, r.ID, r.Name, r.Tables, schema, role, database, fetch, remote, now).Scan(&r.ID, &gotRole, &created)
	if err != nil {
		return fmt.Errorf("postgres: save SQL schema: %w", mapErr(err))
	}
	if gotRole != role {
		// Another save made the same new schema first.
		return fmt.Errorf("postgres: save SQL schema: saved concurrently under another role, try again")
	}
	r.CreatedAt, r.UpdatedAt = unixNano(created), unixNano(now)
	rv, err := buildRemoteViews(ctx, svcTx, remote, fetch, r.Tenant, views)
	if err != nil {
		return err
	}
	if err := buildTenantViews(ctx, dbTx, schema, role, remote, views, rv); err != nil {
		return err
	}
	// Last before the commit, so the lock is held briefly.
	if err := lockSvcDatabaseACL(ctx, svcTx); err != nil {
		return err
	}
	if _, err := svcTx.Exec(ctx, "REVOKE CONNECT ON DATABASE "+ident(currentDB(ctx, c))+" FROM "+ident(role)); err != nil {
		return fmt.Errorf("postgres: save SQL schema: %w", err)
	}
	if err := checkNoSvcConnect(ctx, svcTx, role); err != nil {
		return err
	}
	if err := svcTx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: save SQL schema: %w", err)
	}
	if err := dbTx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: save SQL schema: switching the views: %w", err)
	}
	// What the views read before: the previous save's opaque views, or
	// (a schema built before migration 0038) its views in svc's database,
	// and connections svc made to them there.
	if oldRemote != nil {
		_ = s.exec(ctx, "DROP SCHEMA IF EXISTS "+ident(*oldRemote)+" CASCADE")
	}
	if !isNew && oldDB == nil {
		s.db.rolePools().forget(role)
		_ = s.exec(ctx, "DROP SCHEMA IF EXISTS "+ident(schema)+" CASCADE")
	}
	return nil
}

// exec runs one statement on svc's database.
func (s *SQLSchemas) exec(ctx context.Context, q string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, q)
	return err
}

// lockSvcDatabaseACL takes, until tx ends, the advisory lock that orders
// the transactions granting or revoking rights on svc's database. Each
// such statement rewrites the database's one catalogue row, and
// PostgreSQL fails the second of two overlapping transactions that do
// with "tuple concurrently updated" (XX000) instead of waiting, so saves
// and deletes of different tenants' schemas at once failed.
func lockSvcDatabaseACL(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('svc.sql_schema.database_acl', 0))`); err != nil {
		return fmt.Errorf("postgres: advisory lock: %w", err)
	}
	return nil
}

func currentDB(ctx context.Context, c *pgxpool.Conn) string {
	var d string
	_ = c.QueryRow(ctx, "SELECT current_database()").Scan(&d)
	return d
}

// ensureRoles makes sure the schema role and its fetch role exist with
// their settings, in a transaction of their own (the schema's database,
// another connection, grants to them), and refuses while svc's database
// still grants PUBLIC what the role must not hold. created reports
// whether the roles were made now.
func (s *SQLSchemas) ensureRoles(ctx context.Context, role, fetch, schema string) (created bool, err error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
			return fmt.Errorf("postgres: looking up role: %w", err)
		}
		var fexists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, fetch).Scan(&fexists); err != nil {
			return fmt.Errorf("postgres: looking up role: %w", err)
		}
		var stmts []string
		if !exists {
			// LOGIN without a password until an admin asks for one; NOINHERIT
			// and no memberships, so the role reaches only what is granted.
			stmts = append(stmts, "CREATE ROLE "+ident(role)+" LOGIN NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT 8")
			created = true
		}
		if !fexists {
			// The foreign server's login to svc's database: one per session
			// of the schema role at most.
			stmts = append(stmts, "CREATE ROLE "+ident(fetch)+" LOGIN NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT 16")
		}
		if err := lockSvcDatabaseACL(ctx, tx); err != nil {
			return err
		}
		timeout := roleTimeout(s.StatementTimeout)
		stmts = append(stmts,
			"ALTER ROLE "+ident(role)+" SET search_path = "+ident(schema),
			"ALTER ROLE "+ident(role)+" SET default_transaction_read_only = on",
			"ALTER ROLE "+ident(role)+" SET jit = off", // see OpenSQL
			fmt.Sprintf("ALTER ROLE %s SET statement_timeout = %d", ident(role), timeout.Milliseconds()),
			"ALTER ROLE "+ident(fetch)+" SET default_transaction_read_only = on",
			"ALTER ROLE "+ident(fetch)+" SET jit = off",
			"GRANT CONNECT ON DATABASE "+ident(currentDB(ctx, c))+" TO "+ident(fetch),
		)
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("postgres: granting the SQL schema role: %w", err)
			}
		}
		return checkRoleRights(ctx, tx, role)
	})
	return created, err
}

// DeleteSQLSchema drops the record, the schema's database, its opaque
// views in svc's database and its roles. The role's sessions are ended
// first (svc's pooled ones and direct logins with the issued
// credentials), and the database is dropped WITH (FORCE). What still
// holds the role — an object it owns outside its database (made before
// docs/decisions/0033-sql-tenant-isolation.md took the right away, or
// given to it by an administrator), a session that could not be ended —
// comes back as storage.SQLSchemaInUseError and nothing is deleted.
func (s *SQLSchemas) DeleteSQLSchema(ctx context.Context, tenant, id string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	var role string
	var database, fetch *string
	if err := c.QueryRow(ctx, `SELECT pg_role, pg_database, fetch_role FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid`,
		tenant, id).Scan(&role, &database, &fetch); err != nil {
		return notFoundOr(err, "delete SQL schema")
	}
	s.db.rolePools().forget(role)
	unended := endSessions(ctx, c, role)
	if database != nil {
		// Objects the role owns outside its own database keep it from
		// being dropped: say which before anything is.
		var owned []string
		if err := c.QueryRow(ctx, `SELECT coalesce(array_agg(CASE WHEN d.dbid IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
			                       THEN 'owner of ' || pg_describe_object(d.classid, d.objid, 0)
			                       ELSE 'owner of an object in database ' || coalesce((SELECT datname FROM pg_database WHERE oid = d.dbid), d.dbid::text) END), '{}')
			  FROM pg_shdepend d
			 WHERE d.refclassid = 'pg_authid'::regclass AND d.refobjid = (SELECT oid FROM pg_roles WHERE rolname = $1) AND d.deptype = 'o'
			   AND d.dbid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = $2)`, role, *database).Scan(&owned); err != nil {
			return fmt.Errorf("postgres: delete SQL schema: %w", err)
		}
		if len(owned) > 0 {
			return &storage.SQLSchemaInUseError{Reason: "the schema's PostgreSQL role owns database objects (" +
				strings.Join(owned, "; ") + "); remove them, then delete the schema again"}
		}
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(*database)+" WITH (FORCE)"); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "55006" { // object_in_use
				return &storage.SQLSchemaInUseError{Reason: "sessions of the schema's PostgreSQL role could not be ended (" + pe.Message + "); end them, then delete the schema again"}
			}
			return fmt.Errorf("postgres: dropping the SQL schema's database: %w", err)
		}
	}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		var schema string
		var remote *string
		err := tx.QueryRow(ctx, `DELETE FROM sql_schemas WHERE tenant = $1 AND id = $2::uuid RETURNING pg_schema, pg_role, remote_schema`,
			tenant, id).Scan(&schema, &role, &remote)
		if err != nil {
			return notFoundOr(err, "delete SQL schema")
		}
		// A session that could not be ended may hold a lock on a view:
		// give up soon rather than hold this connection (and the caller)
		// for the statement timeout.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
			return fmt.Errorf("postgres: dropping SQL schema: %w", err)
		}
		drop := []string{"DROP SCHEMA IF EXISTS " + ident(schema) + " CASCADE"}
		if remote != nil {
			drop = append(drop, "DROP SCHEMA IF EXISTS "+ident(*remote)+" CASCADE")
		}
		for _, q := range drop {
			if _, err := tx.Exec(ctx, q); err != nil {
				return inUse(err, unended, "dropping SQL schema views")
			}
		}
		if err := lockSvcDatabaseACL(ctx, tx); err != nil {
			return err
		}
		drop = nil
		for _, r := range append([]string{role}, derefAll(fetch)...) {
			drop = append(drop, "REVOKE ALL ON DATABASE "+ident(currentDB(ctx, c))+" FROM "+ident(r))
		}
		if fetch != nil {
			drop = append(drop, "DROP ROLE IF EXISTS "+ident(*fetch))
		}
		for _, q := range drop {
			if _, err := tx.Exec(ctx, q); err != nil {
				return inUse(err, unended, "dropping SQL schema views")
			}
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

func derefAll(p *string) []string {
	if p == nil {
		return nil
	}
	return []string{*p}
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
