-- Transcripts (session.Transcripts): one row per session that has one, and
-- its entries in order, so that every node reads and resumes the same
-- conversations. An entry is kept as the exact line a transcript file
-- would hold (JSON, without the newline), in TEXT rather than JSONB, which
-- would reorder and respace it: readers decode what the writer encoded.
CREATE TABLE transcripts (
    session_id  TEXT   PRIMARY KEY,
    created_ms  BIGINT NOT NULL,
    archived_ms BIGINT            -- NULL until archived (S-S3)
);

CREATE TABLE transcript_entries (
    session_id TEXT   NOT NULL REFERENCES transcripts (session_id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,   -- 1, 2, ... in the order appended
    line       TEXT   NOT NULL,
    PRIMARY KEY (session_id, seq)
);
