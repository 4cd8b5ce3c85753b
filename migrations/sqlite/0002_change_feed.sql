-- The change feed (docs/decisions/0032-change-events.md): the outbox of
-- change events, written by a commit in its own transaction, and the
-- subscriptions. seq is the cursor: the engine has one writer, so rows are
-- numbered in commit order.
CREATE TABLE change_events (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant        TEXT    NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    entity_id     BLOB    NOT NULL,
    tx_id         BLOB    NOT NULL,
    kind          TEXT    NOT NULL,
    from_state    TEXT    NOT NULL,
    to_state      TEXT    NOT NULL,
    transition    TEXT    NOT NULL,
    emitted_ns    INTEGER NOT NULL,
    body_before   BLOB,
    body_after    BLOB
) STRICT;

-- A subscription's reads and lag: its tenant and model in cursor order.
CREATE INDEX change_events_model ON change_events (tenant, model_name, model_version, seq);
-- The retention sweep.
CREATE INDEX change_events_emitted ON change_events (emitted_ns);

CREATE TABLE subscriptions (
    tenant        TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    model_name    TEXT    NOT NULL,
    model_version INTEGER NOT NULL,
    include_body  TEXT    NOT NULL,
    spec          BLOB    NOT NULL,
    cursor_hi     INTEGER NOT NULL,
    cursor_lo     INTEGER NOT NULL,
    created_ns    INTEGER NOT NULL,
    attached_ns   INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
) STRICT, WITHOUT ROWID;
