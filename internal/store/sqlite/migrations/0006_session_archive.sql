-- The archive sweep made whenever cadre opens its store asks for the child
-- sessions that ended and are not archived yet (session.Filter.EndedBefore):
-- this index holds only those, so the sweep's cost does not grow with the
-- history of archived ones.
CREATE INDEX IF NOT EXISTS sessions_to_archive ON sessions (updated_ms DESC, id DESC)
    WHERE parent_id != '' AND transcript_path NOT LIKE '%.deleted.%';
