-- The change feed (docs/decisions/0032-change-events.md): the outbox of
-- change events, written by a commit in its own transaction, and the
-- subscriptions. An event's cursor is (xid, seq): the writing
-- transaction's id and a sequence. Sequences are taken in no commit
-- order, so readers only read rows whose transaction is older than every
-- transaction still running (pg_snapshot_xmin): no row can appear behind
-- a cursor once it has been read past.
CREATE TABLE change_events (
    xid           xid8     NOT NULL DEFAULT pg_current_xact_id(),
    seq           bigserial NOT NULL,
    tenant        text     NOT NULL,
    model_name    text     NOT NULL,
    model_version int      NOT NULL,
    entity_id     uuid     NOT NULL,
    tx_id         uuid     NOT NULL,
    kind          text     NOT NULL,
    from_state    text     NOT NULL,
    to_state      text     NOT NULL,
    transition    text     NOT NULL,
    emitted_ns    bigint   NOT NULL,
    body_before   bytea,
    body_after    bytea,
    PRIMARY KEY (xid, seq)
);

-- A subscription's reads and lag: its tenant and model in cursor order.
CREATE INDEX change_events_model ON change_events (tenant, model_name, model_version, xid, seq);
-- The retention sweep.
CREATE INDEX change_events_emitted ON change_events (emitted_ns);

CREATE TABLE subscriptions (
    tenant        text   NOT NULL,
    id            text   NOT NULL,
    model_name    text   NOT NULL,
    model_version int    NOT NULL,
    include_body  text   NOT NULL,
    spec          bytea  NOT NULL,
    cursor_hi     bigint NOT NULL,
    cursor_lo     bigint NOT NULL,
    created_ns    bigint NOT NULL,
    attached_ns   bigint NOT NULL,
    PRIMARY KEY (tenant, id)
);
