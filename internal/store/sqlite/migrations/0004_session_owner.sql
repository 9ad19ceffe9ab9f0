-- The process running a session (task.Owner's id), so that a session left
-- "running" by a process that died can be told from a live one.
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
