-- The session index (session.Info) and task records (task.Task), with the
-- columns the embedded SQLite store has reached by its migration 0006. Times
-- are unix milliseconds (UTC) as there: both stores keep an instant to the
-- millisecond, truncated, and NULL for a task time that is "not yet" (a zero
-- time.Time in Go), which sorts as the oldest in lists.
CREATE TABLE sessions (
    id                          TEXT             PRIMARY KEY,
    parent_id                   TEXT             NOT NULL DEFAULT '',  -- '' for a main session
    agent                       TEXT             NOT NULL DEFAULT '',
    session_key                 TEXT             NOT NULL DEFAULT '',
    title                       TEXT             NOT NULL DEFAULT '',
    cwd                         TEXT             NOT NULL DEFAULT '',
    status                      TEXT             NOT NULL,
    created_ms                  BIGINT           NOT NULL,
    updated_ms                  BIGINT           NOT NULL,
    input_tokens                BIGINT           NOT NULL DEFAULT 0,
    output_tokens               BIGINT           NOT NULL DEFAULT 0,
    cache_creation_input_tokens BIGINT           NOT NULL DEFAULT 0,
    cache_read_input_tokens     BIGINT           NOT NULL DEFAULT 0,
    cost_usd                    DOUBLE PRECISION NOT NULL DEFAULT 0,
    num_turns                   BIGINT           NOT NULL DEFAULT 0,
    transcript_path             TEXT             NOT NULL DEFAULT '',
    owner                       TEXT             NOT NULL DEFAULT ''
);

-- ListSessions: children of a session, main sessions of a directory
-- (--continue), and everything, each newest first.
CREATE INDEX sessions_by_parent ON sessions (parent_id, updated_ms DESC, id DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, parent_id, updated_ms DESC, id DESC);
CREATE INDEX sessions_by_updated ON sessions (updated_ms DESC, id DESC);
-- The archive sweep's question (session.Filter.EndedBefore): only child
-- sessions not archived yet, so its cost does not grow with history.
CREATE INDEX sessions_to_archive ON sessions (updated_ms DESC, id DESC)
    WHERE parent_id <> '' AND transcript_path NOT LIKE '%.deleted.%';

-- No foreign keys: a task may be recorded before its child session exists,
-- and a shell task has none.
CREATE TABLE tasks (
    id                          TEXT             PRIMARY KEY,
    kind                        TEXT             NOT NULL,
    agent                       TEXT             NOT NULL DEFAULT '',
    name                        TEXT             NOT NULL DEFAULT '',
    description                 TEXT             NOT NULL DEFAULT '',
    prompt                      TEXT             NOT NULL DEFAULT '',
    parent_session_id           TEXT             NOT NULL DEFAULT '',
    root_session_id             TEXT             NOT NULL DEFAULT '',
    child_session_id            TEXT             NOT NULL DEFAULT '',
    tool_use_id                 TEXT             NOT NULL DEFAULT '',
    status                      TEXT             NOT NULL,
    result                      TEXT             NOT NULL DEFAULT '',
    error                       TEXT             NOT NULL DEFAULT '',
    input_tokens                BIGINT           NOT NULL DEFAULT 0,
    output_tokens               BIGINT           NOT NULL DEFAULT 0,
    cache_creation_input_tokens BIGINT           NOT NULL DEFAULT 0,
    cache_read_input_tokens     BIGINT           NOT NULL DEFAULT 0,
    cost_usd                    DOUBLE PRECISION NOT NULL DEFAULT 0,
    tool_uses                   BIGINT           NOT NULL DEFAULT 0,
    output_file                 TEXT             NOT NULL DEFAULT '',
    notified                    BOOLEAN          NOT NULL DEFAULT false,
    cancel_requested            BOOLEAN          NOT NULL DEFAULT false,
    owner                       TEXT             NOT NULL DEFAULT '',
    heartbeat_ms                BIGINT,
    created_ms                  BIGINT,
    started_ms                  BIGINT,
    finished_ms                 BIGINT,
    progress                    TEXT             NOT NULL DEFAULT '',
    archived                    BOOLEAN          NOT NULL DEFAULT false
);

-- ListTasks, newest first: a run tree's tasks, a session's children, an
-- owner's tasks, unfinished tasks (Recover, a sweeper), and everything.
-- NULLS LAST matches ORDER BY created_ms DESC, PostgreSQL's default for
-- DESC being NULLS FIRST, which the queries override to sort NULL as oldest.
CREATE INDEX tasks_by_root ON tasks (root_session_id, created_ms DESC NULLS LAST, id DESC);
CREATE INDEX tasks_by_parent ON tasks (parent_session_id, created_ms DESC NULLS LAST, id DESC);
CREATE INDEX tasks_by_owner ON tasks (owner, created_ms DESC NULLS LAST, id DESC);
CREATE INDEX tasks_by_status ON tasks (status, created_ms DESC NULLS LAST, id DESC);
CREATE INDEX tasks_by_created ON tasks (created_ms DESC NULLS LAST, id DESC);
