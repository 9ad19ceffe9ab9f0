-- A running task's progress summary (a one-line account of what it is
-- doing, written by a forked summary run), shown by TaskList and cadre tasks.
ALTER TABLE tasks ADD COLUMN progress TEXT NOT NULL DEFAULT '';
