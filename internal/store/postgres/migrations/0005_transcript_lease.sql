-- A transcript's one writer is named on its row (Transcripts, the lease):
-- the node that holds the claim (nodes.id, the task owner id of that
-- process), a random token that is this writer's alone, and when it
-- claimed (the database's clock). An append inserts only while its token
-- is still here, so a writer whose claim was taken over cannot add to the
-- transcript. All three are NULL while no one writes it. The claim needs
-- no connection of its own: it is a row, written through the pool.
ALTER TABLE transcripts
    ADD COLUMN writer_node  TEXT,
    ADD COLUMN writer_token TEXT,
    ADD COLUMN writer_since TIMESTAMPTZ;
