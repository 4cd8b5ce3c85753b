-- Entity models, one row per (tenant, name, version). schema holds the
-- model's SIMPLE_VIEW bytes so every engine stores the same document.
CREATE TABLE models (
    tenant       text        NOT NULL,
    name         text        NOT NULL,
    version      integer     NOT NULL,
    state        text        NOT NULL CHECK (state IN ('LOCKED', 'UNLOCKED')),
    change_level text        NOT NULL DEFAULT '',
    schema       bytea       NOT NULL,
    unique_keys  bytea       NOT NULL DEFAULT '',
    workflows    bytea       NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    revision     bigint      NOT NULL,
    PRIMARY KEY (tenant, name, version)
);
