-- The kind of the principal whose write armed a scheduled task (user,
-- service or system), beside user_id: the fire's revision is attributed
-- to that principal, so its change history reports attributedKind
-- (docs/decisions/0014-entities.md, docs/decisions/0018-scheduled-transitions.md). NULL on tasks armed
-- before; their fires omit attributedKind as legacy rows do.
ALTER TABLE scheduled_tasks ADD COLUMN user_kind text;
