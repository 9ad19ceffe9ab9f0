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

	_ "modernc.org/sqlite" // registers the "sqlite" driver
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
	r    *sql.DB // query_only readers

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

	w, err := sql.Open("sqlite", dsn(abs, map[string]string{
		"_journal_mode": "WAL",
		"_synchronous":  "NORMAL",
		"_txlock":       "immediate",
		// Checkpoints are the checkpointer's (checkpoint.go), off the
		// commit path.
		"_pragma": "wal_autocheckpoint(0)",
	}))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, err := sql.Open("sqlite", dsn(abs, map[string]string{"_query_only": "1"}))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	r.SetMaxOpenConns(maxReaders)
	r.SetMaxIdleConns(maxReaders)

	db := &DB{path: abs, w: w, r: r, ws: newStmtCache(w), rs: newStmtCache(r)}
	// Switching a fresh file to WAL and migrating take locks that SQLite
	// may refuse at once, busy timeout or not, while another process does
	// the same: two cadre commands started together. Such a refusal is
	// retried for a bounded time.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.init(ctx)
		if err == nil {
			db.ck = newCheckpointer(r, nil)
			db.wr = newWriter(db, db.ck.written)
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
func dsn(path string, extra map[string]string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_foreign_keys", "1")
	for k, v := range extra {
		q.Set(k, v)
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") { // a Windows volume: file:///C:/...
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

func (db *DB) init(ctx context.Context) error {
	// The writer connects first: it turns WAL on (a persistent property of
	// the file) before any reader opens.
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not WAL (is the file on a network filesystem?)", mode)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	return db.migrate(ctx, ms)
}

// Path is the database file's absolute path.
func (db *DB) Path() string { return db.path }

// Close closes the database. Writes already submitted are committed first;
// later ones fail. Closing twice is harmless.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		if db.wr != nil {
			db.wr.close()
			db.ck.close()
		}
		err = errors.Join(db.ws.close(), db.rs.close(), db.r.Close(), db.w.Close())
	})
	return err
}

// write runs fn in a transaction of the writer goroutine (writer.go) and
// returns once that transaction committed.
func (db *DB) write(ctx context.Context, fn func(*wtx) error) error {
	return db.wr.do(ctx, fn)
}
