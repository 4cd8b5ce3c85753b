-- Messages: header, metaData and payload as the bytes the API renders (bytea,
-- not jsonb, which would reorder members).
CREATE TABLE messages (
    tenant     text   NOT NULL,
    id         uuid   NOT NULL,
    header     bytea  NOT NULL,
    metadata   bytea  NOT NULL,
    content    bytea  NOT NULL,
    created_ns bigint NOT NULL,
    PRIMARY KEY (tenant, id)
);
