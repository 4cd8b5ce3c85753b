-- Audit event data is kept as the exact JSON text the engine wrote: the
-- trail is only ever read back whole, never queried inside, so JSONB bought
-- nothing but a parse per event on every write (three events per created
-- entity) and key reordering on read, where the memory engine returns the
-- bytes unchanged.
ALTER TABLE audit_events ALTER COLUMN data TYPE text USING data::text;
