-- Issue 23 item 2 (docs/decisions/0033-sql-tenant-isolation.md): a SQL
-- schema role must not read another tenant's view names (often model
-- names) or column names (field paths). PostgreSQL grants PUBLIC SELECT
-- on the catalogue, and the catalogue lists every object of the database
-- whatever the reader's rights. Take back each catalogue table and view
-- that names relations, columns, types, constraints, indexes, triggers,
-- policies or comments, or holds expression trees naming them, and each
-- function printing them from an oid a tenant can count through; give
-- them to svc's own role (the one migrating), which reads pg_class and
-- pg_index (storage/postgres/streamindexes.go) and pg_proc.
--
-- Found by listing the pg_catalog relations PUBLIC may read that have a
-- name, text or pg_node_tree column (the query is in the decision).
-- Left readable on purpose: the information_schema views (owned by the
-- bootstrap superuser, they list only objects the reader owns or holds a
-- privilege on, so a role sees its own views and columns and tools keep
-- a metadata path); pg_stats and pg_stats_ext (filtered the same way);
-- pg_namespace, pg_roles and pg_auth_members (random names, decision
-- 0033); pg_proc, pg_operator, pg_cast and the other catalogues of
-- built-in objects, which name nothing a tenant created; pg_depend,
-- pg_inherits and pg_locks (oids only).
--
-- Like 0034 this only takes effect run by a superuser; SaveSQLSchema
-- refuses SQL access while PUBLIC still holds any of these
-- (storage/postgres/sqlschema_hardening.go keeps the same lists).
DO $$
DECLARE
    r text;
    f regprocedure;
    -- svc's role: the one migrating, or, when an operator applies this
    -- file as a superuser afterwards, the owner of svc's tables.
    svc text := coalesce((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('entities')), current_user);
BEGIN
    FOREACH r IN ARRAY ARRAY[
        -- relation, column and row-type names, column defaults
        'pg_class', 'pg_attribute', 'pg_type', 'pg_attrdef',
        -- constraint, index, trigger, policy, rule, extended-statistics,
        -- partition-key and publication names and expression trees
        'pg_constraint', 'pg_index', 'pg_trigger', 'pg_policy',
        'pg_statistic_ext', 'pg_partitioned_table', 'pg_publication_rel',
        -- comments and security labels on any object
        'pg_description', 'pg_seclabel',
        -- views over the above that name relations, columns, indexes,
        -- rules or policies for every object
        'pg_tables', 'pg_views', 'pg_matviews', 'pg_indexes', 'pg_sequences',
        'pg_rules', 'pg_policies', 'pg_seclabels', 'pg_publication_tables',
        'pg_stats_ext_exprs',
        -- statistics views naming every table, index and sequence
        'pg_stat_all_tables', 'pg_stat_user_tables', 'pg_stat_sys_tables',
        'pg_stat_xact_all_tables', 'pg_stat_xact_user_tables', 'pg_stat_xact_sys_tables',
        'pg_stat_all_indexes', 'pg_stat_user_indexes', 'pg_stat_sys_indexes',
        'pg_statio_all_tables', 'pg_statio_user_tables', 'pg_statio_sys_tables',
        'pg_statio_all_indexes', 'pg_statio_user_indexes', 'pg_statio_sys_indexes',
        'pg_statio_all_sequences', 'pg_statio_user_sequences', 'pg_statio_sys_sequences']
    LOOP
        -- Only what PUBLIC holds: a REVOKE or GRANT by a role that is no
        -- superuser errs on an object it holds no right on.
        IF to_regclass('pg_catalog.' || r) IS NOT NULL
           AND has_table_privilege('public', to_regclass('pg_catalog.' || r), 'SELECT') THEN
            EXECUTE format('REVOKE SELECT ON pg_catalog.%I FROM PUBLIC', r);
            EXECUTE format('GRANT SELECT ON pg_catalog.%I TO %I, %I', r, current_user, svc);
        END IF;
    END LOOP;
    -- Functions printing an object's definition or name from its oid.
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_proc p
         WHERE p.pronamespace = 'pg_catalog'::regnamespace
           AND p.proname IN ('pg_get_indexdef', 'pg_get_constraintdef', 'pg_get_triggerdef',
                             'pg_get_statisticsobjdef', 'pg_get_statisticsobjdef_columns',
                             'pg_get_statisticsobjdef_expressions', 'pg_get_partkeydef',
                             'pg_get_partition_constraintdef', 'pg_describe_object',
                             'pg_identify_object', 'pg_identify_object_as_address')
           AND has_function_privilege('public', p.oid, 'EXECUTE')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I, %I', f, current_user, svc);
    END LOOP;
END $$;
