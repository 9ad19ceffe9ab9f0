// Package migration reads a store's schema migrations: the numbered SQL
// files of its migrations/ folder (0001_sessions.sql, 0002_tasks.sql, ...),
// which must run 1, 2, 3... without gaps or repeats. Each store applies
// them in its own dialect and transaction (the SQLite and PostgreSQL
// stores); this package only finds and checks them, so both agree on what
// a migration is.
package migration
