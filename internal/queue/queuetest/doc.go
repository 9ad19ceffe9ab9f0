// Package queuetest is the conformance suite for a mailbox of messages to
// running agents: queue.Mailbox (one process) and the PostgreSQL store's
// (many) run Run from their own tests, so they behave alike.
//
// The suite covers the order of what is taken (priority, then push order)
// and the fields that survive the trip, inboxes refusing pushes unless
// open, CloseIfEmpty returning what waits instead of closing, exactly-once
// takes among racing takers on separate handles, no message lost or
// stranded when pushes race the close, and a waiter on one handle woken by
// a push through another. Every wait has a deadline; nothing sleeps.
package queuetest
