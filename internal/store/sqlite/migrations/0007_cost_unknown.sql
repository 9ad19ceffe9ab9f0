-- A cost is unknown when some of its usage was on a model with no price:
-- then cost_usd holds what the priced part cost, and cost_unknown is 1, so
-- that a restart still reads "unknown" and never a false $0. Rows from
-- before this migration were priced, or counted as 0: they stay known.
ALTER TABLE sessions ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0 CHECK (cost_unknown IN (0, 1));
ALTER TABLE tasks ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0 CHECK (cost_unknown IN (0, 1));
-- The model a session's agent ran on, for the per-subagent cost report;
-- '' for rows from before this migration.
ALTER TABLE sessions ADD COLUMN model TEXT NOT NULL DEFAULT '';
