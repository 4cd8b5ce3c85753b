-- Change events ride the revision row (issue 28 item 6;
-- docs/decisions/0032-change-events.md). A commit's cost on SQLite is the
-- b-tree pages it writes to the WAL; the outbox table added two (its row and
-- its model index) to a create's four, and a create on a watched model cost
-- 1.33 times one on an unwatched model. Now the event is a few columns of
-- the revision the commit writes anyway, set only for a watched write, and
-- one partial index holds only those rows: one page, no statement.
--
--   ev       NULL: no event. Else kind (1 CREATE, 2 UPDATE, 3 DELETE) in bits
--            0-1; bit 2: the body after (this revision's data) is kept;
--            bit 3: the body before is kept, read from the revision ev >> 4
--            versions back (the entity's version before the commit).
--   ev_from  the state before the commit (NULL: none, a create).
--   ev_to    the state after, when it is not this revision's (a delete
--            after an update in one commit).
--   ev_tr    the transition that started the commit, when it is not this
--            revision's (the first of several writes of the entity).
--
-- The cursor is (1, rowid). revisions is append-only (rowid max + 1, never
-- deleted), so rowids are commit order and the largest is the head; the
-- retention prune clears ev instead of deleting rows.
ALTER TABLE revisions ADD COLUMN ev INTEGER;
ALTER TABLE revisions ADD COLUMN ev_from TEXT;
ALTER TABLE revisions ADD COLUMN ev_to TEXT;
ALTER TABLE revisions ADD COLUMN ev_tr TEXT;

-- The outbox's events are kept: each moves onto the revision it recorded
-- (the entity's last revision written by the event's transaction).
CREATE TEMP TABLE feed_moved AS
    SELECT c.seq, (SELECT r.rowid FROM revisions r WHERE r.id = c.entity_id AND r.tenant = c.tenant AND r.tx_id = c.tx_id
                   ORDER BY r.version DESC LIMIT 1) AS rid,
           (SELECT count(*) FROM revisions r WHERE r.id = c.entity_id AND r.tenant = c.tenant AND r.tx_id = c.tx_id) AS back,
           c.kind, c.from_state, c.to_state, c.transition, c.body_before IS NOT NULL AS before, c.body_after IS NOT NULL AS after
    FROM change_events c WHERE c.tenant <> '';

UPDATE revisions SET
    ev = (CASE m.kind WHEN 'CREATE' THEN 1 WHEN 'UPDATE' THEN 2 ELSE 3 END) | (m.after << 2) | (m.before << 3) | (m.back << 4),
    ev_from = CASE WHEN m.kind = 'CREATE' THEN NULL ELSE m.from_state END,
    ev_to = m.to_state, ev_tr = m.transition
FROM feed_moved m WHERE m.rid IS NOT NULL AND revisions.rowid = m.rid;

-- A subscription's cursor (0, seq) becomes the position just before its
-- first unread event, or the head when it had read everything. Within
-- one commit the order of the moved events may differ from the outbox's:
-- such a commit is delivered again (at least once), never skipped.
UPDATE subscriptions SET
    cursor_lo = COALESCE((SELECT min(m.rid) FROM feed_moved m WHERE m.seq > subscriptions.cursor_lo AND m.rid IS NOT NULL) - 1,
                         (SELECT max(rowid) FROM revisions), 0),
    cursor_hi = 1
WHERE cursor_hi = 0;

DROP TABLE feed_moved;
DROP TABLE change_events;

-- A subscription's reads and lag, the backlog ceiling and the prune: a
-- model's events in cursor order (the rowid ends every index entry).
CREATE INDEX revisions_feed ON revisions (tenant, model_name, model_version) WHERE ev IS NOT NULL;
