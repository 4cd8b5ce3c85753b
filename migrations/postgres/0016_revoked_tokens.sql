-- Revoked access tokens (RFC 7009), by jti. Every node reads this table
-- into its verification cache; a row outlives its token by nothing: once
-- until has passed the token cannot verify anyway and the row is purged.
CREATE TABLE iam_revoked_token (
    jti         text        PRIMARY KEY,
    tenant      text        NOT NULL,
    client_id   text        NOT NULL,
    until       timestamptz NOT NULL,
    revoked_at  timestamptz NOT NULL
);
CREATE INDEX iam_revoked_token_until ON iam_revoked_token (until);
