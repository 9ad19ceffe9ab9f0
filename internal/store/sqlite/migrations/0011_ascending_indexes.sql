-- The listing indexes, ascending. Every listing reads newest first
-- (ORDER BY updated_ms DESC, id DESC; created_ms likewise), and SQLite
-- serves that by walking an ascending index backwards as cheaply as a
-- descending one forwards. But the times only grow: in a descending index
-- each new entry lands at the left end of its group, where a full page is
-- split by the general rebalancing of three siblings, leaving pages about
-- two-thirds full; in an ascending one it lands at the right end, where a
-- full page gets a new page of its own and stays full. A launch of 10,000
-- background agents inserts 90,000 entries into these nine indexes and
-- moves an entry in the four session ones at each of 20,000 updates.
DROP INDEX sessions_by_parent;
DROP INDEX sessions_by_cwd;
DROP INDEX sessions_by_updated;
DROP INDEX sessions_to_archive;
CREATE INDEX sessions_by_parent ON sessions (parent_id, updated_ms, id);
CREATE INDEX sessions_by_cwd ON sessions (cwd, parent_id, updated_ms, id);
CREATE INDEX sessions_by_updated ON sessions (updated_ms, id);
CREATE INDEX sessions_to_archive ON sessions (updated_ms, id)
    WHERE parent_id != '' AND transcript_path NOT LIKE '%.deleted.%';

DROP INDEX tasks_by_root;
DROP INDEX tasks_by_parent;
DROP INDEX tasks_by_owner;
DROP INDEX tasks_by_status;
DROP INDEX tasks_by_created;
CREATE INDEX tasks_by_root ON tasks (root_session_id, created_ms, id);
CREATE INDEX tasks_by_parent ON tasks (parent_session_id, created_ms, id);
CREATE INDEX tasks_by_owner ON tasks (owner, created_ms, id);
CREATE INDEX tasks_by_status ON tasks (status, created_ms, id);
CREATE INDEX tasks_by_created ON tasks (created_ms, id);
