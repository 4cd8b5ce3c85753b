-- Ingest speed (issue 5): fewer and cheaper index insertions per entity.
--
-- Key text columns compare bytewise (COLLATE "C"): tenants and model names
-- are identifiers, not prose, so linguistic order buys nothing, while a
-- libc collation makes every B-tree comparison a strcoll call. It also makes
-- ORDER BY on them agree with Go's string order, which the memory engine
-- uses.
ALTER TABLE entities
    ALTER COLUMN tenant TYPE text COLLATE "C",
    ALTER COLUMN model_name TYPE text COLLATE "C",
    ALTER COLUMN state TYPE text COLLATE "C";
ALTER TABLE entity_revisions
    ALTER COLUMN tenant TYPE text COLLATE "C",
    ALTER COLUMN model_name TYPE text COLLATE "C",
    ALTER COLUMN state TYPE text COLLATE "C";
ALTER TABLE audit_events
    ALTER COLUMN tenant TYPE text COLLATE "C";

-- One model index instead of two: paging in id order and counting by state
-- both read it, the latter index-only thanks to the included columns.
DROP INDEX entities_model_state;
DROP INDEX entities_model_id;
CREATE INDEX entities_model_id ON entities (tenant, model_name, model_version, id) INCLUDE (state, deleted);

-- The audit trail is paged newest first per entity; a primary key in that
-- order serves it with a backward scan, so the second index goes. The key
-- keeps every column of the old one and stays unique.
DROP INDEX audit_events_entity_time;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey;
ALTER TABLE audit_events ADD PRIMARY KEY (tenant, entity_id, at_ns, seq, tx_id);
