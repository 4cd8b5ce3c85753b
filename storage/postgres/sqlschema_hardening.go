package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A SQL schema role logs in to svc's own database and holds whatever
// PostgreSQL grants PUBLIC there. Migration 0034 takes back what reaches
// svc or other tenants (docs/decisions/0033-sql-tenant-isolation.md):
// advisory locks, view and rule definitions, temporary objects, large
// objects, NOTIFY and logical WAL messages. Those REVOKEs only work when
// run by a superuser, so a new role's rights are checked here and SQL
// access is refused while any is left.

// hardenedFuncs selects the pg_catalog functions migration 0034 revokes
// from PUBLIC (kept in step with it).
const hardenedFuncs = `p.pronamespace = 'pg_catalog'::regnamespace
   AND (p.proname LIKE 'pg\_advisory\_%' OR p.proname LIKE 'pg\_try\_advisory\_%'
        OR p.proname IN ('pg_get_viewdef', 'pg_get_ruledef',
                         'lo_create', 'lo_creat', 'lo_from_bytea', 'lo_import', 'lo_put',
                         'lo_open', 'lowrite', 'lo_truncate', 'lo_truncate64', 'lo_unlink',
                         'pg_notify', 'pg_logical_emit_message'))`

// checkRoleRights fails when role may still run any of them.
func checkRoleRights(ctx context.Context, tx pgx.Tx, role string) error {
	var left []string
	err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(what ORDER BY what), '{}') FROM (
		SELECT 'EXECUTE ON FUNCTION ' || p.oid::regprocedure::text AS what
		  FROM pg_proc p WHERE `+hardenedFuncs+` AND has_function_privilege($1, p.oid, 'EXECUTE')
		UNION ALL SELECT 'TEMPORARY ON DATABASE ' || quote_ident(current_database())
		 WHERE has_database_privilege($1, current_database(), 'TEMPORARY')
		UNION ALL SELECT 'SELECT ON pg_catalog.pg_rewrite'
		 WHERE has_table_privilege($1, 'pg_catalog.pg_rewrite', 'SELECT')
		UNION ALL SELECT 'CREATE ON SCHEMA public'
		 WHERE CASE WHEN to_regnamespace('public') IS NULL THEN false
		            ELSE has_schema_privilege($1, 'public', 'CREATE') END) x`, role).Scan(&left)
	if err != nil {
		return fmt.Errorf("postgres: checking the SQL schema role's rights: %w", err)
	}
	if len(left) > 0 {
		return fmt.Errorf("postgres: refusing SQL access: PUBLIC still holds %s in this database; "+
			"apply migrations/postgres/0034_sql_tenant_hardening.sql as a superuser "+
			"(docs/decisions/0033-sql-tenant-isolation.md)", strings.Join(left, ", "))
	}
	return nil
}

// resetSession returns a role connection to the state it was opened in
// before it goes back to its pool: DISCARD ALL drops what a statement can
// leave behind past its transaction's end (prepared statements, session
// settings, advisory locks should a right come back). pgx's own cache of
// prepared statements is emptied with them.
func resetSession(ctx context.Context, c *pgx.Conn) error {
	if err := c.DeallocateAll(ctx); err != nil {
		return err
	}
	_, err := c.Exec(ctx, "DISCARD ALL", pgx.QueryExecModeSimpleProtocol)
	return err
}
