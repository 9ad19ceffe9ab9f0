-- Whether a task's child session was archived, so that the archive sweep
-- made whenever cadre opens its store reads only what is still to do.
ALTER TABLE tasks ADD COLUMN archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1));
