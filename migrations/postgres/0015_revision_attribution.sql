-- Change history attribution (docs/decisions/0014-entities.md): the kind of the
-- principal a revision is attributed to (user_id), and who executed it.
-- NULL on revisions written before svc recorded them; the history then
-- omits attributedKind and executedBy, as the compatible system does for legacy
-- rows. Added without defaults, so no existing row is rewritten.
ALTER TABLE entity_revisions
    ADD COLUMN user_kind text,
    ADD COLUMN exec_id   text,
    ADD COLUMN exec_kind text;
