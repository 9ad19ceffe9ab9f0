// Package records writes the two records a background child touches, its
// session's and its task's, when it starts and when it ends. Where one
// store holds both (the SQLite store of a runtime), each pair is one
// write: the session is created without its record
// (session.Manager.Prepare) and recorded with the task, and its end is
// held back (session.Session.Hold) for the write that records the task's.
// A child that can start at once is recorded running in its first write;
// one that waits for a lane slot records its start when it gets one (S-L5:
// pending, then running). Where the PostgreSQL store also keeps the
// Mailbox, the same write opens the child's inbox.
//
// The spawn core (internal/subagent) decides what a record says and when;
// this package decides how it reaches the stores.
package records
