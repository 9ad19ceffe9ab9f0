-- The processes sharing this store (package cluster): one row per process,
-- its id the task owner id its tasks and sessions record (tasks.owner). A
-- process stamps heartbeat_at every store.heartbeatSeconds and left_at when
-- it closes cleanly; a process that crashed or was killed keeps left_at NULL
-- and simply stops heartbeating. Times are the database's clock (now()), so
-- nodes whose clocks disagree still agree on how long one has been silent.
CREATE TABLE nodes (
    id           TEXT        PRIMARY KEY,
    host         TEXT        NOT NULL DEFAULT '',
    pid          INTEGER     NOT NULL DEFAULT 0,
    started_at   TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    left_at      TIMESTAMPTZ
);

-- Pruning the rows of processes long gone.
CREATE INDEX nodes_by_heartbeat ON nodes (heartbeat_at);
