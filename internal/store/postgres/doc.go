// Package postgres is cadre's store for several nodes sharing one database:
// the session index (session.Index), the task records (task.Store) and the
// transcripts (session.Transcripts, see Transcripts) in PostgreSQL, through pgx and its pool (github.com/jackc/pgx/v5). It
// behaves as the embedded SQLite store does (the same conformance suites
// run against both, S-X3); what differs is how it stays right when many
// processes on many machines write at once.
//
// # Many writers
//
// Every read-modify-write (UpdateSession, UpdateTask and the joint writes)
// runs in one transaction that first reads the row with SELECT ... FOR
// UPDATE: the row stays locked until the commit, so a concurrent writer of
// the same row, in this process or on another node, waits and then reads
// what the first stored. No update is lost, and of all the MarkNotified
// calls on a task exactly one finds Notified unset (its one UPDATE is
// conditioned on the flag). Rows of different records never wait for one
// another. Plain reads take no locks.
//
// An update of a row the DB already knows skips that read. The DB
// remembers, for a bounded number of unfinished records, each row it last
// inserted, read or wrote, with the row's xmin (the id of the transaction
// that wrote that version; known.go). An update of such a row applies fn
// to the copy and sends one UPDATE ... WHERE id = $n AND xmin = $m; any
// write of the row since, by anyone, made another version, the UPDATE
// matches nothing, and the update runs as the read-modify-write above on
// the row as it is. The joint write's statement updates both rows or,
// aborting itself, neither. So fn is only ever applied to the row as
// stored, and the guarantees above hold on either path.
//
// # Change notifications
//
// A trigger on tasks (migrations 0003, 0010, 0011, 0012) announces, by
// any writer, on channel cadre_task, every change of whether a record asks
// for a stop, and every other update of a watched record but a heartbeat
// alone; the payload says " stop" after the id and status while the record
// asks for a stop (WatchStop wakes only for those, a heartbeat's need, and
// marks nothing). WatchTask marks its record watched before it returns, so
// a watcher that reads the record after it hears every change committed
// since. Records nobody watches — most: a run recorded and run by one
// process tells that process in memory — cost no NOTIFY, which would wake
// every listening connection of the database. An insert is not announced:
// a watcher subscribes to a record that exists, then reads it. A push
// to an agent's inbox announces itself on cadre_queue. Each DB has one
// connection of its own that LISTENs (listen.go), started by the first
// WatchTask or Mailbox.Arrived and stopped by Close, and hands each
// notification to that id's subscribers. When the connection drops it
// reconnects, backing off from 50 ms to 5 s, and then wakes every subscriber
// once: notifications sent while nobody listened are lost, so a subscriber
// treats a wake-up as "read your state again", never as the news itself.
//
// # Connection failures
//
// Once open, every statement is retried through a failure that passes — a
// server restarting, a connection it ended, one refused while it starts —
// with backoff from 20 ms to 2 s for at most DefaultRetryFor (retry.go); a
// transaction is run again from its BEGIN, never after a COMMIT whose
// answer was lost, and a statement that may have run is retried only where
// running it twice cannot differ (an append and a claim first look for
// their own entry or token; an update of a known row is conditioned on the
// version it replaces, and when a retry finds the row changed after an
// answer was lost, whether the update was stored is unknown and said so).
// Open itself retries nothing.
//
// # Round trips
//
// A record's read-modify-write sends BEGIN with its reads FOR UPDATE in one
// pgx batch and its writes with COMMIT in a second (pipeline.go): two
// round trips where one statement at a time took four to six. An update of
// a row the DB knows takes one.
//
// # Messages for running agents
//
// Mailbox keeps SendMessage's messages in agent_messages, behind a per-agent
// inbox row that exists while a run takes messages (queue.go says how its
// row locks keep a message from being stranded).
//
// # Schema
//
// Migrations are the numbered files in migrations/ (0001_....sql), applied
// in order on Open inside one transaction that first takes a transaction
// advisory lock (pg_advisory_xact_lock) on a key of cadre's own: when
// several nodes start at once on a fresh database, one migrates while the
// others wait, then find the schema current and apply nothing. The versions
// applied are recorded in cadre_schema_version; a database whose schema is
// newer than this binary knows is refused rather than misread. To change
// the schema, add the next numbered file; never edit one that has shipped.
package postgres
