-- Issue 23 (docs/decisions/0033-sql-tenant-isolation.md): SQL schema
-- roles log in to svc's own database, and everything PostgreSQL grants to
-- PUBLIC there they hold too. Take back what lets a tenant reach svc or
-- another tenant, and give it to svc's own role (the one migrating):
--
-- * advisory locks are database-wide and svc serialises on them (the
--   migration lock, trusted:<tenant>, keypair rotation): a tenant holding
--   one stalled svc; every pg_*advisory* function goes, so no form or key
--   is left over, and the shared lock table cannot be filled either;
-- * view and rule definitions (pg_get_viewdef, pg_get_ruledef and the
--   pg_rewrite trees under them) spell out each view's tenant, model and
--   field paths, and are readable for every view in the database;
-- * writes that read-only sessions were only asked not to do (a session
--   may turn default_transaction_read_only off): temporary objects,
--   large objects, NOTIFY payloads and logical WAL messages.
--
-- Functions in pg_catalog belong to the bootstrap superuser: run by any
-- other role these REVOKEs change nothing (PostgreSQL warns, no error).
-- SaveSQLSchema checks a new role's rights and refuses to hand out SQL
-- access while any of them is still there (storage/postgres
-- sqlschema_hardening.go), so a database migrated without the rights
-- fails closed.
DO $$
DECLARE
    f regprocedure;
    -- svc's role: the one migrating, or, when an operator applies this
    -- file as a superuser afterwards, the owner of svc's tables.
    svc text := coalesce((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('entities')), current_user);
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_proc p
         WHERE p.pronamespace = 'pg_catalog'::regnamespace
           AND (p.proname LIKE 'pg\_advisory\_%' OR p.proname LIKE 'pg\_try\_advisory\_%'
                OR p.proname IN ('pg_get_viewdef', 'pg_get_ruledef',
                                 'lo_create', 'lo_creat', 'lo_from_bytea', 'lo_import', 'lo_put',
                                 'lo_open', 'lowrite', 'lo_truncate', 'lo_truncate64', 'lo_unlink',
                                 'pg_notify', 'pg_logical_emit_message'))
           -- lo_import and the like are no PUBLIC right to begin with: a
           -- REVOKE or GRANT by a role that is no superuser errs on them.
           AND has_function_privilege('public', p.oid, 'EXECUTE')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I, %I', f, current_user, svc);
    END LOOP;
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO %I, %I', current_database(), current_user, svc);
    EXECUTE format('GRANT SELECT ON pg_catalog.pg_rewrite TO %I, %I', current_user, svc);
END $$;

REVOKE SELECT ON pg_catalog.pg_rewrite FROM PUBLIC;
-- PostgreSQL 15 made this the default; older servers still allow it.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
