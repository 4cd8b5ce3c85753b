-- Stream data (docs/decisions/0025-stream-data.md, issue 18).
--
-- stream_data_configs keeps each saved definition; def is the submitted
-- streamDataDef as bytes (not jsonb, which would reorder the Joda-bean
-- members the UI wrote). request_class is copied out for export-by-class.
CREATE TABLE stream_data_configs (
    tenant        text   NOT NULL,
    id            uuid   NOT NULL,
    name          text   NOT NULL DEFAULT '',
    description   text   NOT NULL DEFAULT '',
    owner         text   NOT NULL DEFAULT '',
    request_class text   NOT NULL DEFAULT '',
    created_ns    bigint NOT NULL,
    def           bytea  NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX stream_data_configs_created ON stream_data_configs (tenant, created_ns, id);

-- User composite indexes for stream reads: one partial btree per row
-- (pg_index), built CONCURRENTLY by the svc extension endpoint.
CREATE TABLE sd_indexes (
    tenant        text    NOT NULL,
    id            uuid    NOT NULL,
    model_name    text    NOT NULL,
    model_version integer NOT NULL,
    name          text    NOT NULL,
    range_path    text    NOT NULL,
    eq_paths      text[]  NOT NULL,
    pg_index      text    NOT NULL,
    created_ns    bigint  NOT NULL,
    PRIMARY KEY (tenant, id),
    UNIQUE (tenant, model_name, model_version, name)
);

-- The built-in creationDate range index of stream reads (the UI's default
-- range field): keyset pages over the current rows walk it in order.
CREATE INDEX entities_model_created ON entities (tenant, model_name, model_version, created_ns, id) WHERE NOT deleted;

-- Stream pages read the snapshot of a pointTime as the current rows
-- unchanged since then plus the history of the rows changed since; this
-- finds the latter without walking the model. BRIN: a write appends its
-- new row version at the end of the heap, so updated_ns follows the
-- physical order, and a BRIN entry costs ingest next to nothing.
CREATE INDEX entities_updated_brin ON entities USING brin (updated_ns) WITH (autosummarize = on);
