-- Entities: one row per entity with its current state (entities) and an
-- append-only revision history (entity_revisions). Times are Unix
-- nanoseconds in bigint because the API keeps nanosecond commit instants
-- and timestamptz stops at microseconds.
--
-- entities.doc is the current document as JSONB for search (GIN
-- jsonb_path_ops serves containment pushdown); entity_revisions.data holds
-- the document bytes exactly as written, which is what reads return.
CREATE TABLE entities (
    tenant        text    NOT NULL,
    id            uuid    NOT NULL,
    model_name    text    NOT NULL,
    model_version integer NOT NULL,
    state         text    NOT NULL,
    version       bigint  NOT NULL,
    deleted       boolean NOT NULL DEFAULT false,
    tx_id         uuid    NOT NULL,
    transition    text    NOT NULL DEFAULT '',
    created_ns    bigint  NOT NULL,
    updated_ns    bigint  NOT NULL,
    doc           jsonb,
    PRIMARY KEY (tenant, id)
);

-- Paging a model in id order and finding every entity a model ever had
-- (point-in-time reads join the revisions from here), counts by state.
CREATE INDEX entities_model_id ON entities (tenant, model_name, model_version, id);
CREATE INDEX entities_model_state ON entities (tenant, model_name, model_version, state) WHERE NOT deleted;
-- Containment search on the current documents.
CREATE INDEX entities_doc ON entities USING gin (doc jsonb_path_ops);

CREATE TABLE entity_revisions (
    tenant        text    NOT NULL,
    id            uuid    NOT NULL,
    version       bigint  NOT NULL,
    model_name    text    NOT NULL,
    model_version integer NOT NULL,
    state         text    NOT NULL,
    change_type   text    NOT NULL CHECK (change_type IN ('CREATED', 'UPDATED', 'DELETED')),
    tx_id         uuid    NOT NULL,
    transition    text    NOT NULL DEFAULT '',
    user_id       text    NOT NULL DEFAULT '',
    created_ns    bigint  NOT NULL,
    at_ns         bigint  NOT NULL,
    data          bytea,
    PRIMARY KEY (tenant, id, version)
);

-- No model index on the revisions: a model's entities are found through
-- entities_model_id (rows are never removed from entities), which saves a
-- third B-tree insert per ingested entity.
