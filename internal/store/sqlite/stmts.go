package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

// maxCachedStmts bounds a stmtCache. The store's statements are a fixed set
// plus the list queries, whose text depends on which filter fields are set
// (a few dozen shapes in practice); past the bound a query is prepared for
// one use, so that no caller can grow the cache without limit.
const maxCachedStmts = 64

// stmtCache keeps one prepared statement per query text on a pool.
// database/sql prepares a *sql.Stmt again on each connection it meets and
// keeps those too, so that parsing and planning a statement happens once
// per connection, not on every call: with 1,000 children the store's write
// path spent most of its time in SQLite's parser.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex
	m      map[string]*sql.Stmt
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// lookup returns the cached statement for query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

// get returns the cached statement for query, preparing it on first use.
// When the cache is full it returns nil and no error: the caller runs the
// query unprepared.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	s, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	closed := c.closed
	c.mu.Unlock()
	switch {
	case ok:
		return s, nil
	case closed:
		return nil, errClosed
	case full:
		return nil, nil
	}
	// Preparing takes a connection: not under the lock, so that a slow
	// prepare does not hold up lookups of other statements.
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[query]; ok || c.closed {
		s.Close() // another caller was first, or the store closed meanwhile
		if c.closed {
			return nil, errClosed
		}
		return old, nil
	}
	c.m[query] = s
	return s, nil
}

// queryRow runs a query returning at most one row on the cache's pool.
func (c *stmtCache) queryRow(ctx context.Context, query string, args ...any) row {
	s, err := c.get(ctx, query)
	if err != nil {
		return errRow{err}
	}
	if s == nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// query runs a query on the cache's pool.
func (c *stmtCache) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.db.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// queryAll runs query through c and reads every row it yields with scan.
func queryAll[T any](ctx context.Context, c *stmtCache, scan func(tablerow.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return tablerow.Collect(rows, scan)
}

// limit is a list query's LIMIT clause for n (none when n <= 0), the
// number written into the text, not bound: SQLite reads a bound LIMIT's
// value when it plans the statement, so every execution after a bind
// parses and plans it again — the per-turn list of a session's ten newest
// tasks cost twice what it does now (BenchmarkListTasksNewest). The text
// has one value in practice (10); other values are a few more statements.
func limit(n int) string {
	if n <= 0 {
		return ""
	}
	return " LIMIT " + strconv.Itoa(n)
}

// close closes every cached statement; later gets fail.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for _, s := range c.m {
		errs = append(errs, s.Close())
	}
	clear(c.m)
	return errors.Join(errs...)
}
