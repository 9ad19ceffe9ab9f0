-- The session index (session.Info). Times are unix milliseconds (UTC), so
-- they sort as integers; token counts get a column each so that totals can be
-- summed in SQL.
CREATE TABLE sessions (
    id                          TEXT    PRIMARY KEY,
    parent_id                   TEXT    NOT NULL DEFAULT '',  -- '' for a main session
    agent                       TEXT    NOT NULL DEFAULT '',
    session_key                 TEXT    NOT NULL DEFAULT '',
    title                       TEXT    NOT NULL DEFAULT '',
    cwd                         TEXT    NOT NULL DEFAULT '',
    status                      TEXT    NOT NULL,
    created_ms                  INTEGER NOT NULL,
    updated_ms                  INTEGER NOT NULL,
    input_tokens                INTEGER NOT NULL DEFAULT 0,
    output_tokens               INTEGER NOT NULL DEFAULT 0,
    cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_input_tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd                    REAL    NOT NULL DEFAULT 0,
    num_turns                   INTEGER NOT NULL DEFAULT 0,
    transcript_path             TEXT    NOT NULL DEFAULT ''
) STRICT;

-- ListSessions: children of a session, main sessions of a directory
-- (--continue), and everything, each newest first.
CREATE INDEX sessions_by_parent ON sessions (parent_id, updated_ms DESC, id DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, parent_id, updated_ms DESC, id DESC);
CREATE INDEX sessions_by_updated ON sessions (updated_ms DESC, id DESC);
