-- Task records (task.Task): the lifecycle of background work. Times are unix
-- milliseconds (UTC); NULL means "not yet" (not started, not finished, no
-- heartbeat, or no creation time given), which a zero time.Time stands for in
-- Go; NULLs sort as the oldest. Booleans are 0 or 1.
-- No foreign keys: a task may be recorded before its child session exists,
-- and a shell task has none.
CREATE TABLE tasks (
    id                          TEXT    PRIMARY KEY,
    kind                        TEXT    NOT NULL,
    agent                       TEXT    NOT NULL DEFAULT '',
    name                        TEXT    NOT NULL DEFAULT '',
    description                 TEXT    NOT NULL DEFAULT '',
    prompt                      TEXT    NOT NULL DEFAULT '',
    parent_session_id           TEXT    NOT NULL DEFAULT '',
    root_session_id             TEXT    NOT NULL DEFAULT '',
    child_session_id            TEXT    NOT NULL DEFAULT '',
    tool_use_id                 TEXT    NOT NULL DEFAULT '',
    status                      TEXT    NOT NULL,
    result                      TEXT    NOT NULL DEFAULT '',
    error                       TEXT    NOT NULL DEFAULT '',
    input_tokens                INTEGER NOT NULL DEFAULT 0,
    output_tokens               INTEGER NOT NULL DEFAULT 0,
    cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_input_tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd                    REAL    NOT NULL DEFAULT 0,
    tool_uses                   INTEGER NOT NULL DEFAULT 0,
    output_file                 TEXT    NOT NULL DEFAULT '',
    notified                    INTEGER NOT NULL DEFAULT 0 CHECK (notified IN (0, 1)),
    cancel_requested            INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    owner                       TEXT    NOT NULL DEFAULT '',
    heartbeat_ms                INTEGER,
    created_ms                  INTEGER,
    started_ms                  INTEGER,
    finished_ms                 INTEGER
) STRICT;

-- ListTasks, newest first: a run tree's tasks (TaskList, cadre tasks), a
-- session's children, an owner's tasks, unfinished tasks (Recover, the
-- heartbeat sweeper), and everything.
CREATE INDEX tasks_by_root ON tasks (root_session_id, created_ms DESC, id DESC);
CREATE INDEX tasks_by_parent ON tasks (parent_session_id, created_ms DESC, id DESC);
CREATE INDEX tasks_by_owner ON tasks (owner, created_ms DESC, id DESC);
CREATE INDEX tasks_by_status ON tasks (status, created_ms DESC, id DESC);
CREATE INDEX tasks_by_created ON tasks (created_ms DESC, id DESC);
