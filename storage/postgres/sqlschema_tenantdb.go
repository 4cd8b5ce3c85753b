package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/migrations"
	"svc/storage"
)

// Each saved SQL schema has a PostgreSQL database of its own
// (docs/decisions/0033-sql-tenant-isolation.md). PostgreSQL prints the
// name of any relation or type of the database a session is in from its
// oid without checking rights (16384::regclass, format_type), so a
// schema role logged in to svc's database could list every tenant's view
// names by counting. Now:
//
//   - in svc's database, a save builds its views under opaque names
//     (c1…cN columns, t<i>_now / t<i>_revs views) in a schema with a random
//     name (svc_sqlv_…, a new one per save), read only by the schema's
//     fetch role (svc_sqlf_…, whose password only the foreign server
//     knows);
//   - the schema's database (svc_sqld_…, CONNECT for the schema role and
//     svc only) holds postgres_fdw, a foreign server to svc's database, a
//     user mapping for svc's role (the owner of the views there, whose
//     mapping postgres_fdw uses) to the fetch role, foreign tables over the
//     opaque views (schema svc_fdw, closed to the schema role) and the
//     tenant-named views on top, in the schema the role's search_path
//     names;
//   - the schema role logs in to that database only: migration 0038 takes
//     CONNECT on svc's database from PUBLIC, SaveSQLSchema refuses while
//     the role still holds it, and the watchdog ends a session of the role
//     in any other database.
//
// Names share the role's 20 hex digits: svc_sqlr_x (role), svc_sql_x
// (schema in the role's database), svc_sqld_x (database), svc_sqlf_x
// (fetch role).

// tenantDBNames derives a schema's database and fetch role from its role.
func tenantDBNames(role string) (database, fetch string) {
	x := strings.TrimPrefix(role, "svc_sqlr_")
	return "svc_sqld_" + x, "svc_sqlf_" + x
}

// remoteSchemaName draws the schema of one save's opaque views.
func remoteSchemaName() (string, error) {
	s, _, err := pgNames()
	if err != nil {
		return "", err
	}
	return "svc_sqlv_" + strings.TrimPrefix(s, "svc_sql_"), nil
}

// dialDatabase connects as svc's own role to another database of the
// server.
func (s *SQLSchemas) dialDatabase(ctx context.Context, database string) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(s.db.opt.URL)
	if err != nil {
		return nil, errors.New("postgres: SVC_POSTGRES_URL does not parse as a connection URL")
	}
	cc.Database = database
	cc.RuntimeParams["application_name"] = "svc"
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to the SQL schema's database: %w", err)
	}
	return c, nil
}

// tenantDBSetup is run once in a new schema database, after
// migrations 0034 and 0035 (which take the same rights from PUBLIC there
// as in svc's database): the point-in-time functions its views call.
const tenantDBSetup = `
CREATE SCHEMA svc_sql;
GRANT USAGE ON SCHEMA svc_sql TO PUBLIC;
CREATE FUNCTION svc_sql.point_time() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT NULLIF(current_setting('svc.point_time', true), '')::timestamptz $$;
CREATE FUNCTION svc_sql.point_ns() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT (extract(epoch FROM svc_sql.point_time()) * 1000000)::bigint * 1000 $$;
CREATE SCHEMA svc_fdw;
`

// databaseError turns PostgreSQL's refusal to create the database or the
// extension into *storage.SQLDatabaseError; other errors stay internal.
func databaseError(err error, need, what string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "42501", // insufficient_privilege
			"58P01", // undefined_file: the extension is not installed
			"0A000", // feature_not_supported
			"42704": // undefined_object: no such extension
			return fmt.Errorf("postgres: %s: %w", what, &storage.SQLDatabaseError{Need: need, Detail: pe.Message})
		}
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// createTenantDB makes a schema's database and sets it up: CONNECT for
// role (and svc) only, postgres_fdw, the 0034/0035 revocations, the
// svc_sql functions and a foreign server to svc's database with a user
// mapping for svc's role that logs in as fetch with password. On failure
// the database is dropped again.
func (s *SQLSchemas) createTenantDB(ctx context.Context, database, role, fetch, password string) (err error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	// Where the server reaches svc's database: the address and port svc's
	// own connection came in on (the server connecting to itself), or its
	// Unix socket.
	var host *string
	var port, svcDB string
	if err := c.QueryRow(ctx, `SELECT host(inet_server_addr()), coalesce(inet_server_port()::text, current_setting('port')), current_database()`).
		Scan(&host, &port, &svcDB); err != nil {
		return fmt.Errorf("postgres: reading svc's database address: %w", err)
	}
	if _, err := c.Exec(ctx, "CREATE DATABASE "+ident(database)); err != nil {
		return databaseError(err, "CREATEDB (svc's PostgreSQL role must be allowed to create databases)", "creating the SQL schema's database")
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+ident(database)+" WITH (FORCE)")
		}
	}()
	tc, err := s.dialDatabase(ctx, database)
	if err != nil {
		return err
	}
	defer tc.Close(context.Background())
	return pgx.BeginFunc(ctx, tc, func(tx pgx.Tx) error {
		for _, q := range []string{
			"REVOKE ALL ON DATABASE " + ident(database) + " FROM PUBLIC",
			"GRANT CONNECT ON DATABASE " + ident(database) + " TO " + ident(role),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("postgres: setting up the SQL schema's database: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS postgres_fdw"); err != nil {
			return databaseError(err, "the postgres_fdw extension (installed on the server, and svc's role a superuser or allowed to create it)",
				"creating postgres_fdw in the SQL schema's database")
		}
		for _, name := range []string{"0034_sql_tenant_hardening.sql", "0035_sql_catalog_private.sql"} {
			b, err := fs.ReadFile(migrations.Postgres, name)
			if err != nil {
				return fmt.Errorf("postgres: reading %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, string(b), pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("postgres: applying %s to the SQL schema's database: %w", name, err)
			}
		}
		if _, err := tx.Exec(ctx, tenantDBSetup, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("postgres: setting up the SQL schema's database: %w", err)
		}
		opts := []string{"port " + literal(port), "dbname " + literal(svcDB), "application_name 'svc-sql-fetch'", "fetch_size '1000'"}
		if host != nil {
			opts = append([]string{"host " + literal(*host)}, opts...)
		}
		for _, q := range []string{
			"CREATE SERVER svc FOREIGN DATA WRAPPER postgres_fdw OPTIONS (" + strings.Join(opts, ", ") + ")",
			// For svc's role, the owner of the views: postgres_fdw uses the
			// view owner's mapping, so the schema role needs none (and no
			// USAGE on the server, which hides the options from it).
			"CREATE USER MAPPING FOR CURRENT_USER SERVER svc OPTIONS (user " + literal(fetch) + ", password " + literal(password) + ")",
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return databaseError(err, "the right to use postgres_fdw", "creating the foreign server of the SQL schema's database")
			}
		}
		// The server must reach itself as the fetch role (listen address,
		// pg_hba.conf): find out now rather than at the tenant's first
		// query.
		for _, q := range []string{
			"CREATE FOREIGN TABLE svc_fdw.probe (amname name) SERVER svc OPTIONS (schema_name 'pg_catalog', table_name 'pg_am')",
			"SELECT count(*) FROM svc_fdw.probe",
			"DROP FOREIGN TABLE svc_fdw.probe",
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				var pe *pgconn.PgError
				if errors.As(err, &pe) && strings.HasPrefix(pe.Code, "08") { // connection_exception
					return fmt.Errorf("postgres: the SQL schema's database reaching svc's: %w", &storage.SQLDatabaseError{
						Need:   "the PostgreSQL server to accept a connection from itself to svc's database as the schema's fetch role (listen_addresses, pg_hba.conf, password authentication)",
						Detail: pe.Message})
				}
				return fmt.Errorf("postgres: the SQL schema's database reaching svc's: %w", err)
			}
		}
		return nil
	})
}

// tenantDBExists reports whether database exists.
func (s *SQLSchemas) tenantDBExists(ctx context.Context, database string) (bool, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	var ok bool
	err = c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, database).Scan(&ok)
	return ok, err
}

// remoteView is one opaque view of svc's database and its columns'
// types, for the foreign table over it.
type remoteView struct {
	name string
	cols []string // "c1 uuid", …
}

// buildRemoteViews creates, in tx on svc's database, schema and the now
// and revs views of each table, readable by fetch, and returns them in
// views' order (now, revs, now, revs, …).
func buildRemoteViews(ctx context.Context, tx pgx.Tx, schema, fetch, tenant string, views []storage.SQLView) ([]remoteView, error) {
	if _, err := tx.Exec(ctx, "CREATE SCHEMA "+ident(schema)); err != nil {
		return nil, fmt.Errorf("postgres: building SQL schema views: %w", err)
	}
	var out []remoteView
	for i, v := range views {
		for _, revs := range []bool{false, true} {
			name := fmt.Sprintf("t%d_now", i+1)
			if revs {
				name = fmt.Sprintf("t%d_revs", i+1)
			}
			q, err := remoteViewSQL(schema, name, tenant, v, revs)
			if err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, q); err != nil {
				return nil, fmt.Errorf("postgres: building SQL schema views: %w", err)
			}
			rows, err := tx.Query(ctx, `SELECT quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
				FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
				pgx.Identifier{schema, name}.Sanitize())
			if err != nil {
				return nil, fmt.Errorf("postgres: reading SQL schema view columns: %w", err)
			}
			cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return nil, fmt.Errorf("postgres: reading SQL schema view columns: %w", err)
			}
			out = append(out, remoteView{name: name, cols: cols})
		}
	}
	for _, q := range []string{
		"GRANT USAGE ON SCHEMA " + ident(schema) + " TO " + ident(fetch),
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + ident(schema) + " TO " + ident(fetch),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("postgres: granting the SQL schema fetch role: %w", err)
		}
	}
	return out, nil
}

// buildTenantViews replaces, in tx on the schema's database, the foreign
// tables over remote (in remoteSchema of svc's database) and the views
// the role reads, and checks the role's rights there.
func buildTenantViews(ctx context.Context, tx pgx.Tx, schema, role, remoteSchema string, views []storage.SQLView, remote []remoteView) error {
	stmts := []string{
		"DROP SCHEMA IF EXISTS " + ident(schema) + " CASCADE",
		"DROP SCHEMA IF EXISTS svc_fdw CASCADE",
		"CREATE SCHEMA svc_fdw",
		"CREATE SCHEMA " + ident(schema),
	}
	for _, r := range remote {
		stmts = append(stmts, "CREATE FOREIGN TABLE svc_fdw."+ident(r.name)+" ("+strings.Join(r.cols, ", ")+") SERVER svc OPTIONS (schema_name "+
			literal(remoteSchema)+", table_name "+literal(r.name)+")")
	}
	for i, v := range views {
		stmts = append(stmts, tenantViewSQL(schema, v, remote[2*i].name, remote[2*i+1].name))
	}
	stmts = append(stmts,
		"GRANT USAGE ON SCHEMA "+ident(schema)+" TO "+ident(role),
		"GRANT SELECT ON ALL TABLES IN SCHEMA "+ident(schema)+" TO "+ident(role),
	)
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: building SQL schema views: %w", err)
		}
	}
	return checkRoleRights(ctx, tx, role)
}

// checkNoSvcConnect fails with *storage.SQLRightsError while role may
// still log in to svc's database (tx's), where oids name every tenant's
// objects.
func checkNoSvcConnect(ctx context.Context, tx pgx.Tx, role string) error {
	var left *string
	if err := tx.QueryRow(ctx, `SELECT 'CONNECT ON DATABASE ' || quote_ident(current_database())
		WHERE has_database_privilege($1, current_database(), 'CONNECT')`, role).Scan(&left); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: checking the SQL schema role's rights: %w", err)
	}
	if left != nil {
		return fmt.Errorf("postgres: saving the SQL schema role (docs/decisions/0033-sql-tenant-isolation.md): %w",
			&storage.SQLRightsError{Left: []string{*left}, Migrations: []string{"migrations/postgres/0038_sql_tenant_databases.sql"}})
	}
	return nil
}
