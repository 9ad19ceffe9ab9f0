package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" driver

	"github.com/cadre-dev/cadre/internal/store/migration"
)

const (
	// busyTimeoutMS is how long a connection waits for another process's
	// lock before giving up with SQLITE_BUSY.
	busyTimeoutMS = 5000
	// maxReaders bounds the reader pool; reads are short, and the machines
	// cadre runs on have few cores.
	maxReaders = 4
)

// DB is an open cadre database. It is safe for concurrent use, and several
// DBs (in one process or several) may share a file.
type DB struct {
	path string
	w    *sql.DB // exactly one connection: the writer
	r    *sql.DB // read-only, query_only readers
	// ckp is the checkpointer's connection (checkpoint.go), opened when it
	// first checkpoints.
	ckp *sql.DB

	ws, rs *stmtCache // prepared statements of the writer and the readers
	wr     *writer    // runs every write, group-committing them
	ck     *checkpointer
	once   sync.Once
}

// Open opens (creating it and its directory if needed) the database at path
// and brings its schema up to date.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		// Each pool would get its own in-memory database, and a URI would
		// bypass the settings below: only plain file paths are supported.
		return nil, fmt.Errorf("open database %q: want a file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}

	w, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_txlock":       {"immediate"},
		"_pragma": {
			// Checkpoints are the checkpointer's (checkpoint.go), off
			// the commit path.
			"wal_autocheckpoint(0)",
			// A group commit wraps each write in a savepoint
			// (writer.go), whose journal of the pages it changes is a
			// temporary file by default: a write(2) for every page. In
			// memory it lasts until its transaction commits.
			"temp_store(memory)",
		},
	}))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	// Readers are read-only connections (mode=ro), not only query_only:
	// one of them is the last connection Close closes, and a read-only
	// connection never checkpoints (Close).
	r, err := sql.Open("sqlite", dsn(abs, url.Values{"_query_only": {"1"}, "mode": {"ro"}}))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	r.SetMaxOpenConns(maxReaders)
	r.SetMaxIdleConns(maxReaders)
	ckp, err := sql.Open("sqlite", dsn(abs, url.Values{"_pragma": {"wal_autocheckpoint(0)"}}))
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	ckp.SetMaxOpenConns(1)
	ckp.SetMaxIdleConns(1)

	db := &DB{path: abs, w: w, r: r, ckp: ckp, ws: newStmtCache(w), rs: newStmtCache(r)}
	// Switching a fresh file to WAL and migrating take locks that SQLite
	// may refuse at once, busy timeout or not, while another process does
	// the same: two cadre commands started together. Such a refusal is
	// retried for a bounded time.
	deadline := time.Now().Add(5 * time.Second)
	for {
		backlog, err := db.init(ctx)
		if err == nil {
			db.ck = newCheckpointer(ckp, nil)
			db.wr = newWriter(db, db.ck.written)
			// What earlier processes left in the WAL (they do not
			// checkpoint on close) is checkpointed soon once it is
			// long: every process that opens the store first reads
			// the whole WAL to index it (SQLite's wal-index
			// recovery), so a long one costs every start.
			if backlog >= backlogFrames {
				db.ck.written(checkpointEvery)
			}
			return db, nil
		}
		if !busy(err) || time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("open database %s: %w", abs, err), db.Close())
		}
		t := time.NewTimer(time.Duration(10+rand.IntN(40)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(fmt.Errorf("open database %s: %w", abs, ctx.Err()), db.Close())
		case <-t.C:
		}
	}
}

// busy reports whether err is SQLite refusing a lock (SQLITE_BUSY).
func busy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// dsn is a file: URI for path (escaped, so any character is safe in a path)
// carrying the driver's connection settings common to both pools plus extra.
func dsn(path string, extra url.Values) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_foreign_keys", "1")
	for k, v := range extra {
		q[k] = v
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") { // a Windows volume: file:///C:/...
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// init turns WAL on, migrates the schema and keeps the WAL across runs; it
// returns the WAL backlog (walBacklog).
func (db *DB) init(ctx context.Context) (backlog int, err error) {
	// The writer connects first: it turns WAL on (a persistent property of
	// the file) before any reader opens.
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return 0, err
	}
	if !strings.EqualFold(mode, "wal") {
		return 0, fmt.Errorf("journal mode is %q, not WAL (is the file on a network filesystem?)", mode)
	}
	ms, err := migration.Load(migrationFiles)
	if err != nil {
		return 0, err
	}
	if err := db.migrate(ctx, ms); err != nil {
		return 0, err
	}
	if err := db.persistWAL(ctx); err != nil {
		return 0, err
	}
	return db.walBacklog(ctx), nil
}

// persistWAL keeps the WAL file when the writer's connection closes, should
// it ever be the one to checkpoint then: deleting the WAL would make the
// next process's first commit create it again and sync the directory.
func (db *DB) persistWAL(ctx context.Context) error {
	c, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		fc, ok := dc.(sqlite.FileControl)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) has no file control", dc)
		}
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			return fmt.Errorf("persist the WAL: %w", err)
		}
		return nil
	})
}

// Path is the database file's absolute path.
func (db *DB) Path() string { return db.path }

// Close closes the database. Writes already submitted are committed first;
// later ones fail. Closing twice is harmless.
//
// Close leaves the WAL as it is, without a checkpoint: SQLite makes the
// last connection to close a database checkpoint it (two fsyncs, on every
// exit of a short run), unless that connection is read-only. So a reader
// holds the database while the writer and the checkpointer close, and
// closes last. The next process's checkpointer copies the WAL back once it
// is long enough (walBacklog). What this costs: the last commits reach the
// disk when the kernel writes them back, not before the process exits, so
// a power cut right after a run may lose them — which synchronous=NORMAL
// already allows of any commit (doc.go); a process that is killed loses
// nothing.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		if db.wr != nil {
			db.wr.close()
			db.ck.close()
		}
		// A read transaction's lock on the database file outlives
		// the transaction in WAL mode, until the connection closes.
		// Without it (it failed to open), the writer checkpoints as
		// it closes: slower, not wrong.
		hold, herr := db.r.Conn(context.Background())
		if herr == nil {
			var v int
			// Any answer will do: the read is what holds the snapshot.
			_ = hold.QueryRowContext(context.Background(), `PRAGMA schema_version`).Scan(&v)
		}
		err = errors.Join(db.ws.close(), db.w.Close(), db.ckp.Close())
		if herr == nil {
			err = errors.Join(err, hold.Close())
		}
		err = errors.Join(err, db.rs.close(), db.r.Close())
	})
	return err
}

// write runs fn in a transaction of the writer goroutine (writer.go) and
// returns once that transaction committed.
func (db *DB) write(ctx context.Context, fn func(*wtx) error) error {
	return db.wr.do(ctx, fn)
}
