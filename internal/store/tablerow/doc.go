// Package tablerow is the row shape of the sessions and tasks tables that
// cadre's SQL stores share (internal/store/sqlite, internal/store/postgres):
// the column lists, how a row is scanned into a session.Info or a
// task.Task, and the values that write one. Times are unix milliseconds, a
// task's zero times NULL, so both databases give back the same instants.
// The SQL itself (placeholders, locking, upserts) stays with each store.
package tablerow
