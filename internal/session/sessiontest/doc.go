// Package sessiontest is the conformance suite for session.Index: every
// implementation (session.Mem, the SQLite store, the PostgreSQL store) runs Run
// from its own tests, so they all behave alike.
//
// The suite covers create and get (every field, usage included), duplicate
// and empty ids, not-found errors, updates (including a failing fn and one
// that tries to change the id), atomicity of concurrent updates, list order
// and filters, and cancelled contexts.
package sessiontest
