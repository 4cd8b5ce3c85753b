-- Audit trail: one row per audit event, written in the same transaction as
-- the entity change it records. Times are Unix nanoseconds like the
-- entity tables. seq orders the events of one transaction.
CREATE TABLE audit_events (
    tenant     text    NOT NULL,
    entity_id  uuid    NOT NULL,
    tx_id      uuid    NOT NULL,
    seq        integer NOT NULL,
    at_ns      bigint  NOT NULL,
    kind       text    NOT NULL,
    event_type text    NOT NULL,
    state      text    NOT NULL DEFAULT '',
    user_id    text    NOT NULL DEFAULT '',
    details    text    NOT NULL DEFAULT '',
    data       jsonb,
    PRIMARY KEY (tenant, entity_id, tx_id, seq)
);

-- An entity's trail newest first (the list endpoint pages this order);
-- the primary key serves the per-transaction filter and the finished
-- lookup.
CREATE INDEX audit_events_entity_time ON audit_events (tenant, entity_id, at_ns DESC, seq DESC);
