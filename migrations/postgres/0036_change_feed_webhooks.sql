-- Webhook delivery of the change feed (docs/decisions/0037-change-feed-webhooks.md):
-- the signing secret of each webhook subscription, its delivery state
-- (shown on the resource) and the lease that lets one node at a time
-- deliver it. A row lives and dies with its subscription.
CREATE TABLE subscription_webhooks (
    tenant        text    NOT NULL,
    id            text    NOT NULL,
    secret        text    NOT NULL,
    failures      int     NOT NULL DEFAULT 0,
    failing       boolean NOT NULL DEFAULT false,
    last_error    text    NOT NULL DEFAULT '',
    last_attempt_ns bigint NOT NULL DEFAULT 0,
    next_attempt_ns bigint NOT NULL DEFAULT 0,
    lease_owner   text    NOT NULL DEFAULT '',
    lease_until_ns bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
);
