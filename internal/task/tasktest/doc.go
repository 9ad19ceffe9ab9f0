// Package tasktest is the conformance suite for task.Store: every
// implementation (task.Mem, the SQLite store, the PostgreSQL store) runs Run from
// its own tests, so they all behave alike (S-X3).
//
// The suite covers create and get (every field, usage and empty fields
// included, times to the millisecond in UTC), invalid and duplicate records,
// not-found errors, updates (a failing fn, one that changes the id or sets
// an unknown status, atomicity of concurrent read-modify-writes), list order
// and filters, MarkNotified (exactly one winner among racing callers, refusal
// of unfinished tasks), the task lifecycle (every event of task.Lifecycle on
// a task in every status: moved where the table says, or refused with
// ErrTransition and nothing stored; UpdateTask refusing a status change;
// two racing ends, one of which wins) and cancelled contexts.
// RaceMarkNotified, RaceEndClaim and RaceEnds let a store also race several
// handles of one database, as separate processes would.
package tasktest
