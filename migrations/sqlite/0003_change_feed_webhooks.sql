-- Webhook delivery of the change feed (docs/decisions/0037-change-feed-webhooks.md):
-- the signing secret of each webhook subscription, its delivery state
-- (shown on the resource) and the lease of the node delivering it.
CREATE TABLE subscription_webhooks (
    tenant          TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    secret          TEXT    NOT NULL,
    failures        INTEGER NOT NULL DEFAULT 0,
    failing         INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    last_attempt_ns INTEGER NOT NULL DEFAULT 0,
    next_attempt_ns INTEGER NOT NULL DEFAULT 0,
    lease_owner     TEXT    NOT NULL DEFAULT '',
    lease_until_ns  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
) STRICT, WITHOUT ROWID;
