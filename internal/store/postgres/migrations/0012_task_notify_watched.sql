-- A task's changes are announced only once someone watches it, and the
-- trigger's condition is small (issue 28: announcing every background
-- run's changes was a third of the server's CPU, though nobody outside
-- the run's own process follows most runs).
--
-- Every NOTIFY wakes each listening connection of the database, cadre's
-- and River's, whether or not one of them waits for that task; and the
-- server reads and compiles a trigger's WHEN condition again for each
-- statement that updates the table, so 0011's condition, a comparison of
-- every column, cost about as much as the NOTIFYs it saved. A run
-- recorded and run by the same process tells its own process in memory.
-- So a record is announced when:
--   - it asks for a stop or stops asking (cancel_requested changes): a
--     run's heartbeat, wherever the run is, listens for those
--     (WatchStop), and it does not mark the record;
--   - anything but the heartbeat changes on a record that is watched:
--     WatchTask (a stand-in following a run on another node, a send
--     waiting for a run in another process to record its end) sets
--     watched before its first read of the record, so every change
--     committed after that read is announced (a write that waited for
--     the mark's row lock runs on the marked row). The mark itself is
--     not announced: its watcher reads the record next.
-- watched is never cleared: a record watched once stays announced, which
-- costs announcements only. A process of an older cadre still running
-- when this migration lands does not mark what it watches: it hears those
-- records' stops at once and their other changes through its poll.
--
-- The function compares the rows whole but for the heartbeat and the
-- mark, so a column added later is compared without being listed.
ALTER TABLE tasks ADD COLUMN watched BOOLEAN NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION cadre_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.cancel_requested IS DISTINCT FROM NEW.cancel_requested
        OR to_jsonb(OLD) - 'heartbeat_ms' - 'watched' IS DISTINCT FROM to_jsonb(NEW) - 'heartbeat_ms' - 'watched' THEN
        PERFORM pg_notify('cadre_task', NEW.id || ' ' || NEW.status || CASE WHEN NEW.cancel_requested THEN ' stop' ELSE '' END);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER tasks_notify ON tasks;

CREATE TRIGGER tasks_notify AFTER UPDATE ON tasks FOR EACH ROW
    WHEN (OLD.watched OR OLD.cancel_requested IS DISTINCT FROM NEW.cancel_requested)
    EXECUTE FUNCTION cadre_task_notify();
