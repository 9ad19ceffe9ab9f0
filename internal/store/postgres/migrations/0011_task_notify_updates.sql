-- Task change notifications at less cost (issue 28: a background child's
-- three announced writes took a quarter of the server's CPU).
--
-- Only updates are announced. Every watcher (WatchTask, WatchStop: a
-- stand-in's Follow, mailbox.AwaitRecordedEnd, a run's heartbeat) watches
-- a record that exists and reads it after subscribing, so the insert woke
-- no one; it still cost a NOTIFY, which wakes every listening connection
-- of the database.
--
-- Whether anything but the heartbeat changed is the trigger's WHEN
-- condition, which the server evaluates without calling the function: a
-- heartbeat alone calls nothing, and the function only sends. The
-- condition lists every column but heartbeat_ms; a column added later must
-- be added to it (TestTaskTriggerListsEveryColumn fails until it is).
CREATE OR REPLACE FUNCTION cadre_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cadre_task', NEW.id || ' ' || NEW.status || CASE WHEN NEW.cancel_requested THEN ' stop' ELSE '' END);
    RETURN NULL;
END
$$;

DROP TRIGGER tasks_notify ON tasks;

CREATE TRIGGER tasks_notify AFTER UPDATE ON tasks FOR EACH ROW
    WHEN (
        (OLD.id, OLD.kind, OLD.agent, OLD.name, OLD.description, OLD.prompt, OLD.parent_session_id,
         OLD.root_session_id, OLD.child_session_id, OLD.tool_use_id, OLD.status, OLD.result,
         OLD.error, OLD.input_tokens, OLD.output_tokens, OLD.cache_creation_input_tokens,
         OLD.cache_read_input_tokens, OLD.cost_usd, OLD.tool_uses, OLD.output_file, OLD.notified,
         OLD.cancel_requested, OLD.owner, OLD.created_ms, OLD.started_ms, OLD.finished_ms,
         OLD.progress, OLD.archived, OLD.cost_unknown, OLD.remote_task_id)
        IS DISTINCT FROM
        (NEW.id, NEW.kind, NEW.agent, NEW.name, NEW.description, NEW.prompt, NEW.parent_session_id,
         NEW.root_session_id, NEW.child_session_id, NEW.tool_use_id, NEW.status, NEW.result,
         NEW.error, NEW.input_tokens, NEW.output_tokens, NEW.cache_creation_input_tokens,
         NEW.cache_read_input_tokens, NEW.cost_usd, NEW.tool_uses, NEW.output_file, NEW.notified,
         NEW.cancel_requested, NEW.owner, NEW.created_ms, NEW.started_ms, NEW.finished_ms,
         NEW.progress, NEW.archived, NEW.cost_unknown, NEW.remote_task_id)
    )
    EXECUTE FUNCTION cadre_task_notify();
