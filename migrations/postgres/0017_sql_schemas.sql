-- SQL Schema API (issue 17). sql_schemas holds each tenant's saved SQL
-- schemas: the table configurations exactly as saved (tables), and the
-- PostgreSQL schema of views and the read-only login role built from them.
-- The views themselves are created at save time (storage/postgres
-- sqlschema_views.go), not here.
CREATE TABLE sql_schemas (
    tenant        text        NOT NULL,
    id            uuid        NOT NULL,
    name          text        NOT NULL,
    tables        jsonb       NOT NULL,
    pg_schema     text        NOT NULL,
    pg_role       text        NOT NULL,
    -- The role's current password, issued by the credentials endpoint;
    -- svc itself connects as the role to run POST /sql/query.
    role_password text,
    created_ns    bigint      NOT NULL,
    updated_ns    bigint      NOT NULL,
    PRIMARY KEY (tenant, id),
    UNIQUE (tenant, name)
);

-- Helpers every view calls. Extraction functions take one JSON value and
-- give the column's type, or NULL when the value has another shape: one
-- odd document never fails a query. The SQL ones are deliberately not
-- STRICT: PostgreSQL inlines a single-expression SQL function into the
-- query only when it is not STRICT (or provably strict), and a called SQL
-- function costs ~15 µs a row (a GROUP BY over 2000 rows went from 33 ms
-- to … once inlined).
CREATE SCHEMA svc_sql;
GRANT USAGE ON SCHEMA svc_sql TO PUBLIC;

-- The instant every view reads at: the session or transaction setting
-- svc.point_time (a timestamptz literal), NULL when unset (current data).
CREATE FUNCTION svc_sql.point_time() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT NULLIF(current_setting('svc.point_time', true), '')::timestamptz $$;

CREATE FUNCTION svc_sql.point_ns() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT (extract(epoch FROM svc_sql.point_time()) * 1000000)::bigint * 1000 $$;

CREATE FUNCTION svc_sql.ns_ts(ns bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT 'epoch'::timestamptz + (ns / 1000) * interval '1 microsecond' $$;

CREATE FUNCTION svc_sql.arr(j jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'array' THEN j ELSE '[]'::jsonb END $$;

-- Every non-container value as text (a STRING column renders numbers and
-- booleans as text); containers as their JSON text.
CREATE FUNCTION svc_sql.txt(j jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE jsonb_typeof(j) WHEN 'string' THEN j #>> '{}' WHEN 'null' THEN NULL ELSE j::text END $$;

CREATE FUNCTION svc_sql.int4(j jsonb) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'number' AND j::text ~ '^-?[0-9]{1,9}$' THEN j::text::integer END $$;

CREATE FUNCTION svc_sql.int8(j jsonb) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'number' AND j::text ~ '^-?[0-9]{1,18}$' THEN j::text::bigint END $$;

CREATE FUNCTION svc_sql.num(j jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'number' THEN j::text::numeric END $$;

CREATE FUNCTION svc_sql.dec38(j jsonb) RETURNS numeric(38,18) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'number' AND abs(j::text::numeric) < 1e20 THEN j::text::numeric(38,18) END $$;

CREATE FUNCTION svc_sql.f8(j jsonb) RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'number' AND abs(j::text::numeric) < 1e308
               AND (j::text::numeric = 0 OR abs(j::text::numeric) > 1e-307) THEN j::text::double precision END $$;

CREATE FUNCTION svc_sql.bool(j jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'boolean' THEN j::text::boolean END $$;

CREATE FUNCTION svc_sql.uuid(j jsonb) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) = 'string'
               AND (j #>> '{}') ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
               THEN (j #>> '{}')::uuid END $$;

CREATE FUNCTION svc_sql.year(j jsonb) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN jsonb_typeof(j) IN ('number', 'string') AND (j #>> '{}') ~ '^-?[0-9]{1,6}$' THEN (j #>> '{}')::integer END $$;

-- Temporal and binary values can be shaped right and still be invalid
-- (2026-02-30), so they are parsed under an exception handler after a
-- pattern check that keeps the common path cheap.
CREATE FUNCTION svc_sql.date(j jsonb) RETURNS date LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF jsonb_typeof(j) <> 'string' THEN RETURN NULL; END IF;
    IF (j #>> '{}') ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN RETURN to_date(j #>> '{}', 'YYYY-MM-DD'); END IF;
    IF (j #>> '{}') ~ '^[0-9]{4}-[0-9]{2}$' THEN RETURN to_date(j #>> '{}', 'YYYY-MM'); END IF;
    RETURN NULL;
EXCEPTION WHEN others THEN RETURN NULL;
END $$;

CREATE FUNCTION svc_sql.ts(j jsonb) RETURNS timestamp LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF jsonb_typeof(j) <> 'string' OR (j #>> '{}') !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+)?$' THEN RETURN NULL; END IF;
    RETURN (j #>> '{}')::timestamp;
EXCEPTION WHEN others THEN RETURN NULL;
END $$;

CREATE FUNCTION svc_sql.tstz(j jsonb) RETURNS timestamptz LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF jsonb_typeof(j) <> 'string' OR (j #>> '{}') !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+)(\[[^]]*\])?$' THEN RETURN NULL; END IF;
    RETURN regexp_replace(j #>> '{}', '\[[^]]*\]$', '')::timestamptz;
EXCEPTION WHEN others THEN RETURN NULL;
END $$;

CREATE FUNCTION svc_sql.time(j jsonb) RETURNS time LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF jsonb_typeof(j) <> 'string' OR (j #>> '{}') !~ '^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?$' THEN RETURN NULL; END IF;
    RETURN (j #>> '{}')::time;
EXCEPTION WHEN others THEN RETURN NULL;
END $$;

CREATE FUNCTION svc_sql.bytes(j jsonb) RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF jsonb_typeof(j) <> 'string' THEN RETURN NULL; END IF;
    RETURN decode(j #>> '{}', 'base64');
EXCEPTION WHEN others THEN RETURN NULL;
END $$;
