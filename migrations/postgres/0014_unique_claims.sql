-- Unique keys (docs/decisions/0023-unique-keys.md): one row per unique-key value a live
-- entity holds. The primary key is the uniqueness structure itself: a
-- commit inserts its claims in the same transaction as its entities, so
-- of two concurrent writers of one value the second waits for the first
-- and then finds the value taken (or free, if the first rolled back).
-- Deleting an entity, or rewriting its keys, deletes its rows.
CREATE TABLE unique_claims (
    tenant        text COLLATE "C" NOT NULL,
    model_name    text COLLATE "C" NOT NULL,
    model_version integer NOT NULL,
    key_id        text COLLATE "C" NOT NULL,
    value         bytea NOT NULL,
    entity_id     uuid NOT NULL,
    PRIMARY KEY (tenant, model_name, model_version, key_id, value)
);

-- Freeing an entity's claims finds them by entity.
CREATE INDEX unique_claims_entity ON unique_claims (entity_id, tenant);
