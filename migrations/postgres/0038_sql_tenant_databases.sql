-- Issue 23 item 2 (docs/decisions/0033-sql-tenant-isolation.md): PostgreSQL
-- prints any relation's or type's name from its oid without checking
-- rights (16384::regclass), so a schema role logged in to svc's database
-- could list other tenants' view names by counting. Each saved schema now
-- gets a database of its own (storage/postgres/sqlschema_tenantdb.go)
-- whose views reach svc's through postgres_fdw, and svc's database holds
-- nothing named after a tenant's tables.
--
-- pg_database: the schema's own database (NULL: built before this
-- migration, views still in svc's database until svc moves it at start);
-- fetch_role: the role its foreign server logs in to svc's database as;
-- remote_schema: the schema of opaque views, in svc's database, its
-- foreign tables read. IF NOT EXISTS: an operator may apply
-- this file again as a superuser (see below).
ALTER TABLE sql_schemas
    ADD COLUMN IF NOT EXISTS pg_database   text,
    ADD COLUMN IF NOT EXISTS fetch_role    text,
    ADD COLUMN IF NOT EXISTS remote_schema text;

-- A schema role must not log in to svc's database at all: PUBLIC loses
-- CONNECT on it, and svc's role (the one migrating, and the owner of
-- svc's tables when an operator applies this file later) keeps it.
-- Roles of schemas built before this migration keep CONNECT until their
-- schema is moved to its own database (svc does that at start,
-- sqlschema.Service.MoveLegacy). Other roles
-- that log in to svc's database need GRANT CONNECT. Only the database's
-- owner or a superuser can change this; otherwise nothing changes here and
-- SaveSQLSchema refuses SQL access (CONNECT is checked with the rights of
-- 0034 and 0035).
DO $$
DECLARE
    svc text := coalesce((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('entities')), current_user);
    r text;
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       OR pg_has_role(current_user, (SELECT datdba FROM pg_database WHERE datname = current_database()), 'MEMBER') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I, %I', current_database(), current_user, svc);
        FOR r IN SELECT DISTINCT pg_role FROM sql_schemas WHERE EXISTS (SELECT 1 FROM pg_roles WHERE rolname = pg_role) LOOP
            EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), r);
        END LOOP;
        EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', current_database());
    END IF;
END $$;
