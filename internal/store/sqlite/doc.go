// Package sqlite is cadre's default store: an embedded SQLite database in the
// state directory (pure Go, modernc.org/sqlite, no cgo, no server). It
// implements session.Index and task.Store (the task records of background runs).
//
// # Several processes, one file
//
// Two cadre runs may open the same database at once. The database is in WAL
// journal mode, so readers never block the writer nor the writer readers;
// writers are serialised by SQLite's own lock, and busy_timeout (5 s) makes a
// writer wait for that lock instead of failing with SQLITE_BUSY.
//
// Within one process a DB holds two database/sql pools on the file:
//
//   - a writer pool of exactly one connection. SQLite admits one writer at a
//     time anyway; queuing writers on database/sql's pool (which honours
//     ctx) is cheaper and fairer than letting several connections spin in
//     the busy handler. Its transactions begin IMMEDIATE (_txlock), taking
//     the write lock up front: a read-modify-write (UpdateSession) that began
//     DEFERRED could find, when it upgrades to write, that another process
//     wrote in between, and SQLite then fails at once with SQLITE_BUSY
//     instead of waiting.
//   - a reader pool of a few query_only connections, so listing and reading
//     sessions run alongside a write.
//
// synchronous=NORMAL is the usual WAL setting: a committed transaction
// survives the process being killed; only a power cut may lose the last
// commits (the database itself stays consistent).
//
// # Writes
//
// Every write runs on one goroutine (writer.go), which group-commits the
// writes queued while its previous transaction ran, without a savepoint
// each unless one of them fails (then the batch runs again, each write in
// one, so that the failed write is undone alone). An update writes only
// the columns its fn changed, so that indexes on the others are not
// rewritten, and nothing when it changed nothing (update.go); it is given
// the row the writer last read or wrote when nobody else can have
// changed it since, instead of reading it again (rows.go).
//
// # Schema
//
// Migrations are the numbered files in migrations/ (0001_sessions.sql,
// ...), applied in order inside one IMMEDIATE transaction on Open and
// recorded in schema_version; rerunning them is a no-op, and two processes
// opening a fresh file at once apply them exactly once. A database whose
// schema is newer than this binary knows is refused rather than misread. To
// change the schema, add the next numbered file; never edit one that has
// shipped. The listing indexes hold their times ascending (0011): new rows
// are the newest, and land at an index's right end; the listings, newest
// first, walk them backwards.
package sqlite
