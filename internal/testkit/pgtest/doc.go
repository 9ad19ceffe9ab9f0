// Package pgtest starts a throwaway PostgreSQL server for a test binary and
// gives each test a fresh, empty database on it, for the tests of cadre's
// PostgreSQL store.
//
// The server is Debian's postgresql package (the newest
// /usr/lib/postgresql/N/bin), run the way DEPENDENCIES.md shows: initdb in a
// temporary directory, pg_ctl listening on 127.0.0.1 and a free port only,
// with fsync off (a test's data need not survive a power cut) and trust
// authentication (nothing else can reach a loopback port of a cluster whose
// socket is in a private directory). PostgreSQL refuses to run as root, so
// as root every command runs as the postgres user through runuser.
//
// One server serves all the tests of a binary: it starts when a test first
// asks for a database, and TestMain stops it (Server.Main does both that and
// goleak's check). A watchdog process holds the
// read end of a pipe whose write end only the test binary holds; when the
// binary ends in any way (a panic, a -timeout, SIGKILL), the pipe closes and
// the watchdog stops the server and deletes its directory, so no cluster
// outlives its tests.
//
// Where PostgreSQL is not installed, a test that asks for a database fails
// under CI (CI=true), which must never skip it, and elsewhere skips saying
// SKIPPED, NOT TESTED and what to install.
package pgtest
