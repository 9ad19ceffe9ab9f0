// Package task keeps the durable records of cadre's background work: each
// background subagent run, background shell command (Bash with
// run_in_background, kind local_bash) and remote agent run is a Task whose
// record survives the process that runs it.
//
// # Lifecycle
//
// A task is created pending (registered, waiting for a slot in the
// subagent lane), becomes running when it starts, and ends in exactly one
// terminal status: completed, failed, killed or timeout. The id names the run
// everywhere (S-T0); for a local agent it is the agent id and the child
// session id.
//
// Statuses change only by events (start, complete, fail, stop, time out,
// orphan, resume, ...), and lifecycle.go holds the whole state machine as
// one table: which statuses each event may happen to, where it leads, who
// causes it and what it announces. Every store enforces it: UpdateTask
// refuses a status change, and Store.Transition applies an event to the
// record as stored, in the same atomic update, so of two ends racing on
// one run exactly one is recorded and the other is refused (ErrTransition).
//
// Termination happens in a fixed order (S-L6): the terminal status and the
// result are recorded first (Transition); only then is the parent told
// (the notification); slow cleanup comes last. Whoever tells the parent —
// the notifier, or a blocking TaskOutput that saw the terminal status —
// first calls Store.MarkNotified, and only the caller that gets true
// speaks. The notifier may instead claim the flag in the very Transition
// that records the terminal status, saving a write: MarkNotified refuses a
// task not yet terminal, so it finds the flag already taken. The flag flips false → true atomically in the store, across
// goroutines and across processes sharing the store, so a finished task
// yields exactly one notification (S-N1). MarkNotified refuses a task that
// has not reached a terminal status, which keeps the order honest.
//
// # Stores
//
// Store is declared here, where it is consumed. Mem implements it in
// memory; the store packages implement it on SQLite (the default) and
// PostgreSQL (multi-node). Every implementation runs the conformance suite
// in package tasktest, so they all behave alike (S-X3).
//
// # Owners and crash recovery
//
// A task that a process executes is recorded with that process's owner id.
// The process proves it is alive by holding, for its whole lifetime, an
// exclusive non-blocking flock on <dir>/<owner-id>.lock (dir is
// $CADRE_HOME/run): see ClaimOwner. The kernel drops the lock when the
// process dies, however it dies, so Alive — "can I take this lock?" —
// never depends on pids, which the system reuses. Owner ids are random.
//
// When cadre starts, Recover fails every pending or running task whose owner
// is no longer alive (§17: a killed process's orphaned tasks become failed,
// with an error naming the owner); its caller marks their child sessions
// failed too, and a later SendMessage can still resume them from their
// transcripts. Remote-agent tasks have no local owner and are left alone.
// Recover is Sweep judged by those locks (LockJudge); a store shared by
// several machines judges by node heartbeats instead (package cluster),
// with Ended still telling a crashed process of this CADRE_HOME at once.
//
// On systems without flock (Windows, Plan 9, ...) an owner counts as alive
// while its lock file exists; a process that dies without Close leaves its
// tasks unrecovered until the file is deleted.
package task
