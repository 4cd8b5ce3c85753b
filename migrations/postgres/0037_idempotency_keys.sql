-- Idempotency keys (docs/decisions/0040-idempotency-key.md): one row per
-- (tenant, key). The row is reserved (committed on its own) before a keyed
-- write runs, so every node of a cluster sees the request in flight; the
-- write's own transaction writes its answer on the row; the sweep deletes
-- rows older than the retention.
CREATE TABLE idempotency_keys (
    tenant      text        NOT NULL,
    key         text        NOT NULL,
    fingerprint bytea       NOT NULL,
    owner       uuid        NOT NULL,
    lease_ns    bigint      NOT NULL,
    created_ns  bigint      NOT NULL,
    done        boolean     NOT NULL DEFAULT false,
    status      int         NOT NULL DEFAULT 0,
    body        bytea,
    PRIMARY KEY (tenant, key)
);

-- The retention sweep.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ns);
