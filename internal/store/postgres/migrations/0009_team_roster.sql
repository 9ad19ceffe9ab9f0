-- A team's roster beside its task list (tasklist.Roster; NULL when no
-- teammate joined), so that a team outlives the process that led it.
ALTER TABLE task_lists ADD COLUMN roster JSONB;
