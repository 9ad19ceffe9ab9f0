// Package session persists cadre's conversations: every session, main or
// child, is an append-only JSONL transcript plus a record in an Index (id,
// parent, agent, session key, title, cwd, status, timestamps, usage).
//
// # Transcripts
//
// A transcript holds one Entry per line. Writer encodes each entry with its
// trailing newline into one buffer and hands it to the kernel in a single
// write on a file opened with O_APPEND. Once Append returns, the entry is in
// the operating system's page cache, so a killed, crashed or panicking cadre
// process cannot lose it; only a machine crash or power cut could. That is
// the guarantee the design asks for (§17: "transcripts are intact up to the
// last flushed message"), so the writer deliberately does not fsync: an
// fsync per message would cost milliseconds on every turn to protect
// against an event that also loses the model's in-flight work. Should the
// process die inside the write, the file ends in a partial line;
// ReadTranscript skips and reports such a line, and OpenWriter terminates it
// before appending so the next entry starts on a line of its own.
//
// Messages rebuilds the model's context from a transcript and repairs what a
// killed process leaves behind (a tool call without a result), so resuming
// always produces a history a provider accepts.
//
// # Index
//
// Index is declared here, where it is consumed, and implemented by Mem (in
// memory, for tests and embedding) and by the store packages (SQLite and
// PostgreSQL). Every implementation runs the conformance suite in
// package sessiontest.
//
// Manager ties the two together: it creates sessions (index record plus
// transcript), reopens them for --resume, and finds the newest main session
// of a directory for --continue. Session ids that come from outside are
// checked by ValidateID before any path is built from them.
//
// # Where transcripts live
//
// Transcripts, declared here where the Manager consumes it, is where a
// Manager keeps transcripts: Files, the JSONL files above at
// <dir>/<id>.jsonl, or a store's (the PostgreSQL store keeps them in
// tables, so that every machine sharing it reads and resumes them). Both
// keep one writer per session, across processes, with a claim that ends
// when its holder dies, and both run the conformance suite
// sessiontest.RunTranscripts. Every reader goes through
// Manager.ReadTranscript; a record's TranscriptPath is a file path only
// when InFile says so.
package session
