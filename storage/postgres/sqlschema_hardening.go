package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// A SQL schema role logs in to svc's own database and holds whatever
// PostgreSQL grants PUBLIC there. Migration 0034 takes back what reaches
// svc or other tenants (docs/decisions/0033-sql-tenant-isolation.md):
// advisory locks, view and rule definitions, temporary objects, large
// objects, NOTIFY and logical WAL messages; 0035 the catalogue entries
// naming other tenants' views and columns. Those REVOKEs only work when
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

// catalogPrivateRels and catalogPrivateFuncs are what migration 0035
// revokes from PUBLIC (kept in step with it): the catalogue tables and
// views naming relations, columns, types, constraints, indexes,
// triggers, policies and comments, and the functions printing them.
var catalogPrivateRels = []string{
	"pg_class", "pg_attribute", "pg_type", "pg_attrdef",
	"pg_constraint", "pg_index", "pg_trigger", "pg_policy",
	"pg_statistic_ext", "pg_partitioned_table", "pg_publication_rel",
	"pg_description", "pg_seclabel",
	"pg_tables", "pg_views", "pg_matviews", "pg_indexes", "pg_sequences",
	"pg_rules", "pg_policies", "pg_seclabels", "pg_publication_tables",
	"pg_stats_ext_exprs",
	"pg_stat_all_tables", "pg_stat_user_tables", "pg_stat_sys_tables",
	"pg_stat_xact_all_tables", "pg_stat_xact_user_tables", "pg_stat_xact_sys_tables",
	"pg_stat_all_indexes", "pg_stat_user_indexes", "pg_stat_sys_indexes",
	"pg_statio_all_tables", "pg_statio_user_tables", "pg_statio_sys_tables",
	"pg_statio_all_indexes", "pg_statio_user_indexes", "pg_statio_sys_indexes",
	"pg_statio_all_sequences", "pg_statio_user_sequences", "pg_statio_sys_sequences",
}

const catalogPrivateFuncs = `p.pronamespace = 'pg_catalog'::regnamespace
   AND p.proname IN ('pg_get_indexdef', 'pg_get_constraintdef', 'pg_get_triggerdef',
                     'pg_get_statisticsobjdef', 'pg_get_statisticsobjdef_columns',
                     'pg_get_statisticsobjdef_expressions', 'pg_get_partkeydef',
                     'pg_get_partition_constraintdef', 'pg_describe_object',
                     'pg_identify_object', 'pg_identify_object_as_address')`

// hardeningMigrations are the files an operator applies as a superuser
// when checkRoleRights refuses.
var hardeningMigrations = []string{
	"migrations/postgres/0034_sql_tenant_hardening.sql",
	"migrations/postgres/0035_sql_catalog_private.sql",
}

// checkRoleRights fails with *storage.SQLRightsError when role may still
// run or read any of them.
func checkRoleRights(ctx context.Context, tx pgx.Tx, role string) error {
	var left []string
	err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(what ORDER BY what), '{}') FROM (
		SELECT 'EXECUTE ON FUNCTION ' || p.oid::regprocedure::text AS what
		  FROM pg_proc p WHERE (`+hardenedFuncs+`) AND has_function_privilege($1, p.oid, 'EXECUTE')
		UNION ALL SELECT 'EXECUTE ON FUNCTION ' || p.oid::regprocedure::text
		  FROM pg_proc p WHERE (`+catalogPrivateFuncs+`) AND has_function_privilege($1, p.oid, 'EXECUTE')
		UNION ALL SELECT 'SELECT ON pg_catalog.' || r
		  FROM unnest($2::text[]) r
		 WHERE to_regclass('pg_catalog.' || r) IS NOT NULL
		   AND has_table_privilege($1, to_regclass('pg_catalog.' || r), 'SELECT')
		UNION ALL SELECT 'TEMPORARY ON DATABASE ' || quote_ident(current_database())
		 WHERE has_database_privilege($1, current_database(), 'TEMPORARY')
		UNION ALL SELECT 'SELECT ON pg_catalog.pg_rewrite'
		 WHERE has_table_privilege($1, 'pg_catalog.pg_rewrite', 'SELECT')
		UNION ALL SELECT 'CREATE ON SCHEMA public'
		 WHERE CASE WHEN to_regnamespace('public') IS NULL THEN false
		            ELSE has_schema_privilege($1, 'public', 'CREATE') END) x`, role, catalogPrivateRels).Scan(&left)
	if err != nil {
		return fmt.Errorf("postgres: checking the SQL schema role's rights: %w", err)
	}
	if len(left) > 0 {
		return fmt.Errorf("postgres: saving the SQL schema role (docs/decisions/0033-sql-tenant-isolation.md): %w",
			&storage.SQLRightsError{Left: left, Migrations: hardeningMigrations})
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
