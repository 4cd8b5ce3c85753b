-- Idempotency keys (docs/decisions/0040-idempotency-key.md): one row per
-- (tenant, key), reserved before a keyed write runs, its answer written by
-- the write's own transaction, swept after the retention.
CREATE TABLE idempotency_keys (
    tenant       TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    fingerprint  BLOB    NOT NULL,
    owner        BLOB    NOT NULL,
    lease_ns     INTEGER NOT NULL,
    created_ns   INTEGER NOT NULL,
    done         INTEGER NOT NULL DEFAULT 0,
    status       INTEGER NOT NULL DEFAULT 0,
    body         BLOB,
    PRIMARY KEY (tenant, key)
) STRICT;

-- The retention sweep.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ns);
