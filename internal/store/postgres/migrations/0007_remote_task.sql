-- The id the remote A2A server gave a remote_agent task's work, so that a
-- cadre started after the one that launched it can subscribe to the task
-- again instead of losing its answer (S-W2). NULL for every other task.
ALTER TABLE tasks ADD COLUMN remote_task_id TEXT;
