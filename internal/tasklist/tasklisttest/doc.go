// Package tasklisttest is the conformance suite every tasklist.Store
// passes: the memory store, SQLite and PostgreSQL run the same checks,
// concurrent claimers on one item among them.
package tasklisttest
