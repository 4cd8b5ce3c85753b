-- The SQLite engine's schema (storage/sqlite; docs/decisions/0031-sqlite-engine.md).
-- Times are Unix nanoseconds (INTEGER), 0 meaning "not set"; ids are the 16
-- bytes of a UUID (BLOB), which compare like Go's bytes.Compare. Tables are
-- STRICT so a value of the wrong type is refused instead of stored.

-- Entity models, one row per (tenant, name, version). schema holds the
-- model's SIMPLE_VIEW bytes, as on every engine.
CREATE TABLE models (
    tenant       TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    version      INTEGER NOT NULL,
    state        TEXT    NOT NULL,
    change_level TEXT    NOT NULL,
    schema       BLOB    NOT NULL,
    unique_keys  BLOB    NOT NULL,
    workflows    BLOB    NOT NULL,
    created_ns   INTEGER NOT NULL,
    updated_ns   INTEGER NOT NULL,
    revision     INTEGER NOT NULL,
    PRIMARY KEY (tenant, name, version)
) STRICT;

-- Entities: one small row per entity with its current version (entities)
-- and an append-only revision history holding the documents (revisions).
-- entities is keyed by id first: svc's v1 UUIDs grow with time in their
-- first bytes, so creates append near the end of the B-tree.
CREATE TABLE entities (
    id            BLOB    NOT NULL,
    tenant        TEXT    NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    state         TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    deleted       INTEGER NOT NULL,
    created_ns    INTEGER NOT NULL,
    updated_ns    INTEGER NOT NULL,
    PRIMARY KEY (id, tenant)
) STRICT, WITHOUT ROWID;

-- Paging a model's live entities in id order, counting them, counting by
-- state: all from this index alone.
CREATE INDEX entities_model ON entities (tenant, model_name, model_version, deleted, id, state);

-- A revision row carries everything a read returns, so a get is one index
-- descent and one row. change: 0 created, 1 updated, 2 deleted. trio is
-- 1 + the audit sequence of a create's implicit three-event trail (see
-- audit.go), 0 when the trail is stored in audit_events. data comes last:
-- reads without it (history) stop before its overflow pages.
CREATE TABLE revisions (
    id            BLOB    NOT NULL,
    tenant        TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    state         TEXT    NOT NULL,
    change        INTEGER NOT NULL,
    tx_id         BLOB    NOT NULL,
    transition    TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    created_ns    INTEGER NOT NULL,
    at_ns         INTEGER NOT NULL,
    user_kind     TEXT,
    exec_id       TEXT,
    exec_kind     TEXT,
    trio          INTEGER NOT NULL,
    data          BLOB
) STRICT;
CREATE UNIQUE INDEX revisions_id ON revisions (id, tenant, version);

-- Audit events, written in the transaction of the change they record.
-- kind '~trio' is one row standing for the three events of a write that
-- ran no workflow (audit.go).
CREATE TABLE audit_events (
    entity_id  BLOB    NOT NULL,
    tenant     TEXT    NOT NULL,
    at_ns      INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    tx_id      BLOB    NOT NULL,
    kind       TEXT    NOT NULL,
    event_type TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    details    TEXT    NOT NULL,
    data       BLOB,
    PRIMARY KEY (entity_id, tenant, at_ns, seq, tx_id)
) STRICT, WITHOUT ROWID;

-- Scheduled transitions, armed and cancelled in the transaction of the
-- entity change; redispatch_ns is the scheduler's claim (NULL: unclaimed).
CREATE TABLE scheduled_tasks (
    tenant        TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    entity_id     BLOB    NOT NULL,
    source_state  TEXT    NOT NULL,
    transition    TEXT    NOT NULL,
    scheduled_ns  INTEGER NOT NULL,
    timeout_ms    INTEGER,
    redispatch_ns INTEGER,
    user_id       TEXT    NOT NULL,
    user_kind     TEXT    NOT NULL,
    arm_tx        BLOB    NOT NULL,
    PRIMARY KEY (tenant, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX scheduled_tasks_due ON scheduled_tasks (scheduled_ns);
CREATE INDEX scheduled_tasks_entity ON scheduled_tasks (tenant, entity_id);

-- Unique keys (docs/decisions/0023-unique-keys.md): one row per value a
-- live entity holds; the primary key is the uniqueness rule.
CREATE TABLE unique_claims (
    tenant        TEXT    NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    key_id        TEXT    NOT NULL,
    value         BLOB    NOT NULL,
    entity_id     BLOB    NOT NULL,
    PRIMARY KEY (tenant, model_name, model_version, key_id, value)
) STRICT, WITHOUT ROWID;
CREATE INDEX unique_claims_entity ON unique_claims (entity_id, tenant);

-- Edge messages: header, metaData and payload as the bytes the API renders.
CREATE TABLE messages (
    id         BLOB    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    header     BLOB    NOT NULL,
    metadata   BLOB    NOT NULL,
    content    BLOB    NOT NULL,
    created_ns INTEGER NOT NULL
) STRICT;

-- Async search jobs; a snapshot's result ids are kept in chunks of
-- packed 16-byte ids (search_jobs.go).
CREATE TABLE search_jobs (
    id            BLOB    NOT NULL PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    condition     BLOB    NOT NULL,
    sort          TEXT    NOT NULL,
    at_ns         INTEGER NOT NULL,
    status        TEXT    NOT NULL,
    result_count  INTEGER NOT NULL,
    error         TEXT    NOT NULL,
    created_ns    INTEGER NOT NULL,
    finished_ns   INTEGER NOT NULL,
    calc_ms       INTEGER NOT NULL,
    heartbeat_ns  INTEGER NOT NULL,
    epoch         INTEGER NOT NULL,
    stale_claims  INTEGER NOT NULL
) STRICT;
CREATE INDEX search_jobs_status ON search_jobs (status, heartbeat_ns);
CREATE TABLE search_job_results (
    job_id BLOB    NOT NULL,
    chunk  INTEGER NOT NULL,
    ids    BLOB    NOT NULL,
    PRIMARY KEY (job_id, chunk)
) STRICT;

-- Small, rarely written records (IAM clients, keypairs, trusted keys, OIDC
-- providers, revocations, SQL schemas, stream-data definitions and
-- indexes), one JSON document each. Their rules (caps, sharing, rotation)
-- run in Go inside the single writer's transaction (records.go).
CREATE TABLE records (
    kind   TEXT NOT NULL,
    key    TEXT NOT NULL,
    tenant TEXT NOT NULL,
    body   BLOB NOT NULL,
    PRIMARY KEY (kind, key)
) STRICT;
CREATE INDEX records_tenant ON records (kind, tenant);
