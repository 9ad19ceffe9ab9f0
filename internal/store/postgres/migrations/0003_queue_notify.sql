-- Messages queued for running agents (SendMessage), where every node can
-- push them and the node that runs the agent takes them; and change
-- notifications (LISTEN/NOTIFY) so that a waiting node hears at once.

-- An agent's inbox is open while a run of it takes messages: a row here.
-- A push checks it under a shared row lock and the run closes it under an
-- exclusive one (internal/store/postgres/queue.go), so a message is either
-- taken by the run or refused to its sender, never left behind unread.
CREATE TABLE agent_inboxes (
    agent_id  TEXT   PRIMARY KEY,
    owner     TEXT   NOT NULL DEFAULT '',  -- the process running it (task.Owner)
    opened_ms BIGINT NOT NULL
);

-- One queued message (queue.Entry). seq orders the entries of one
-- priority; message is the llm.Message as JSON.
CREATE TABLE agent_messages (
    seq         BIGSERIAL PRIMARY KEY,
    agent_id    TEXT      NOT NULL,
    priority    INTEGER   NOT NULL,
    mode        TEXT      NOT NULL,
    task_id     TEXT      NOT NULL DEFAULT '',
    uuid        TEXT      NOT NULL DEFAULT '',
    agent       TEXT      NOT NULL DEFAULT '',
    message     JSONB     NOT NULL,
    enqueued_ms BIGINT    NOT NULL
);
CREATE INDEX agent_messages_by_agent ON agent_messages (agent_id, seq);

-- Every change to a task's record, by any writer (one that knows nothing
-- of notifications included), is announced on channel cadre_task with the
-- payload "<id> <status>", delivered when the write commits. A heartbeat
-- alone is not news: running tasks refresh theirs every few seconds, and
-- every listening node would hear each one.
CREATE FUNCTION cadre_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
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
    PERFORM pg_notify('cadre_task', NEW.id || ' ' || NEW.status);
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION cadre_task_notify();
