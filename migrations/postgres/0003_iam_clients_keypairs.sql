-- Machine clients. client_id is global: the token endpoint receives only
-- the id. secret_sha256 is the SHA-256 of a 256-bit random secret.
CREATE TABLE iam_m2m_client (
    client_id     text        PRIMARY KEY,
    tenant_id     text        NOT NULL,
    user_id       text        NOT NULL,
    roles         text[]      NOT NULL DEFAULT '{}',
    secret_sha256 bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX iam_m2m_client_tenant ON iam_m2m_client (tenant_id, created_at, client_id);

-- Signing keypairs, global. private_pkcs8_sealed is AES-256-GCM under a key
-- derived from SVC_JWT_SIGNING_KEY; NULL for the bootstrap keypair.
CREATE TABLE iam_keypair (
    kid                  text        PRIMARY KEY,
    audience             text        NOT NULL,
    algorithm            text        NOT NULL,
    public_spki          bytea       NOT NULL,
    private_pkcs8_sealed bytea,
    active               boolean     NOT NULL,
    valid_from           timestamptz NOT NULL,
    valid_to             timestamptz NOT NULL,
    is_bootstrap         boolean     NOT NULL DEFAULT false,
    retired              boolean     NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL
);
