-- Scheduled transitions: one row per armed task, written in the same
-- transaction as the entity change that armed or cancelled it. Times are
-- Unix nanoseconds like the entity tables; redispatch_ns is the
-- scheduler's claim (NULL: never picked since armed).
CREATE TABLE scheduled_tasks (
    tenant        text   NOT NULL,
    id            text   NOT NULL,
    entity_id     uuid   NOT NULL,
    source_state  text   NOT NULL,
    transition    text   NOT NULL,
    scheduled_ns  bigint NOT NULL,
    timeout_ms    bigint,
    redispatch_ns bigint,
    user_id       text   NOT NULL DEFAULT '',
    arm_tx        uuid   NOT NULL,
    PRIMARY KEY (tenant, id)
);

-- The scheduler's due scan, oldest first across tenants.
CREATE INDEX scheduled_tasks_due ON scheduled_tasks (scheduled_ns);

-- Reconcile reads an entity's tasks on every settled write.
CREATE INDEX scheduled_tasks_entity ON scheduled_tasks (tenant, entity_id);
