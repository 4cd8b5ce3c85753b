-- Async search jobs and their snapshots (ordered result ids). A job row is
-- small; results live beside it and go with it (ON DELETE CASCADE), so
-- the reaper is one DELETE. Times are Unix nanoseconds like the entity
-- tables; 0 means "not set".
CREATE TABLE search_jobs (
    tenant        text    NOT NULL,
    id            uuid    NOT NULL,
    model_name    text    NOT NULL,
    model_version integer NOT NULL,
    condition     bytea   NOT NULL,
    sort          text[]  NOT NULL DEFAULT '{}',
    at_ns         bigint  NOT NULL,
    status        text    NOT NULL CHECK (status IN ('RUNNING', 'SUCCESSFUL', 'FAILED', 'CANCELLED')),
    result_count  bigint  NOT NULL DEFAULT 0,
    error         text    NOT NULL DEFAULT '',
    created_ns    bigint  NOT NULL,
    finished_ns   bigint  NOT NULL DEFAULT 0,
    calc_ms       bigint  NOT NULL DEFAULT 0,
    heartbeat_ns  bigint  NOT NULL,
    epoch         bigint  NOT NULL DEFAULT 1,
    stale_claims  integer NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
);

-- The stale sweeper looks at RUNNING jobs by heartbeat; the reaper at
-- finished ones by finish time.
CREATE INDEX search_jobs_running ON search_jobs (heartbeat_ns) WHERE status = 'RUNNING';
CREATE INDEX search_jobs_finished ON search_jobs (finished_ns) WHERE status <> 'RUNNING';

CREATE TABLE search_job_results (
    job_id    uuid   NOT NULL REFERENCES search_jobs (id) ON DELETE CASCADE,
    seq       bigint NOT NULL,
    entity_id uuid   NOT NULL,
    PRIMARY KEY (job_id, seq)
);
