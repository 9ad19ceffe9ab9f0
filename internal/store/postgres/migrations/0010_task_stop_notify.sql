-- A task's change notification says " stop" after "<id> <status>" when its
-- record asks for a stop (cancel_requested), so that a run's heartbeat,
-- which wakes only to learn of a stop, re-reads the record for those and
-- not for every change its own process makes (heartbeat.StopWatcher).
-- Listeners that read only the id and the status are unaffected.
CREATE OR REPLACE FUNCTION cadre_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    beat tasks%ROWTYPE;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        beat := NEW;
        beat.heartbeat_ms := OLD.heartbeat_ms;
        IF beat IS NOT DISTINCT FROM OLD THEN
            RETURN NULL;
        END IF;
    END IF;
    PERFORM pg_notify('cadre_task', NEW.id || ' ' || NEW.status || CASE WHEN NEW.cancel_requested THEN ' stop' ELSE '' END);
    RETURN NULL;
END
$$;
