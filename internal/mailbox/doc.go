// Package mailbox reaches runs in other processes that share the task
// store (S-X2): messages sent to an agent that runs elsewhere, and a stop
// requested elsewhere, heard at once rather than at the next poll.
//
// A run takes its messages through an Inbox, its side of a Mailbox (the
// queue package's in memory, the PostgreSQL store's across processes); a
// sender reaches an agent whose record names another process with a
// Courier. A TaskWatcher says that a run's record changed, in any process.
package mailbox
