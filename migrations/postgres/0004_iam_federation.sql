-- Trusted keys and OIDC provider registrations (IAM federation). Both are
-- shared by every node; verification caches reconcile from these tables.

-- A trusted key's kid is global: the token header names only the kid, so
-- two tenants cannot hold the same one. jwk keeps the registered public
-- JWK as text so it is echoed as registered.
CREATE TABLE iam_trusted_keys (
    kid         text        PRIMARY KEY,
    tenant      text        NOT NULL,
    jwk         text        NOT NULL,
    audience    text        NOT NULL,
    issuers     text[],     -- NULL: the registration carried no issuers
    active      boolean     NOT NULL,
    valid_from  timestamptz NOT NULL,
    valid_to    timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX iam_trusted_keys_tenant ON iam_trusted_keys (tenant);

-- One registration per (tenant, discovery URI); other tenants may register
-- the same URI under the audience rules the service enforces.
CREATE TABLE iam_oidc_providers (
    id              text        PRIMARY KEY,
    tenant          text        NOT NULL,
    well_known_uri  text        NOT NULL,
    issuers         text[],
    audiences       text[],
    roles_claim     text,       -- NULL: the configured default
    invalidated_at  timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (tenant, well_known_uri)
);
CREATE INDEX iam_oidc_providers_uri ON iam_oidc_providers (well_known_uri);
