-- A leaner outbox (issue 28 item 6): a commit with one change event used to
-- write four b-tree pages to the WAL at COMMIT (the row, the model index,
-- the emitted_ns index and the AUTOINCREMENT counter in sqlite_sequence),
-- which made a create on a watched model cost 1.5 times one on an unwatched
-- model. Now it writes two: the row and the model index, which the
-- subscriptions' reads, lag and backlog ceiling need.
--
-- seq is a plain INTEGER PRIMARY KEY (the rowid, max + 1 on insert). It
-- never goes back: when the retention prune removes the newest row it
-- leaves a mark row with its seq and tenant '' (no tenant; no reader
-- returns it; storage/sqlite/changes.go PruneChanges), so the largest seq
-- ever handed out stays in the table. The retention prune walks the rows in seq order,
-- in which emitted_ns does not decrease (the writer's clock), instead of
-- its own index.
CREATE TABLE change_events_lean (
    seq           INTEGER PRIMARY KEY,
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

INSERT INTO change_events_lean SELECT seq, tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state,
    transition, emitted_ns, body_before, body_after FROM change_events ORDER BY seq;

-- An emptied outbox kept its high-water mark only in sqlite_sequence: keep
-- it as such a mark row, pruned once newer rows exist.
INSERT INTO change_events_lean (seq, tenant, model_name, model_version, entity_id, tx_id, kind, from_state, to_state, transition, emitted_ns)
    SELECT seq, '', '', 0, x'', x'', 'HEAD', '', '', '', 0 FROM sqlite_sequence
    WHERE name = 'change_events' AND seq > 0 AND NOT EXISTS (SELECT 1 FROM change_events);

DROP TABLE change_events;
ALTER TABLE change_events_lean RENAME TO change_events;

-- A subscription's reads and lag, and the backlog ceiling: its tenant and
-- model in cursor order.
CREATE INDEX change_events_model ON change_events (tenant, model_name, model_version, seq);
