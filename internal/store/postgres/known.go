package postgres

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
)

// A DB remembers the rows it last inserted, read or wrote, each with its
// xmin: PostgreSQL's id of the transaction that wrote that version of the
// row. An update of a row it knows (a background child's task, created,
// then started, then ended by this process) then needs no read: fn runs
// on the remembered copy and one autocommit UPDATE ... WHERE id = $n AND
// xmin = $m writes the result. Any other write of the row since, by
// anyone (another handle, another node, MarkNotified, a stop request),
// made a new version with another xmin, so the UPDATE matches nothing and
// the update falls back to the read-modify-write under a row lock (rmw),
// which judges the row as it is. A remembered row is never trusted
// otherwise: a stale one costs a round trip, never a lost update.
//
// A remembered row is what a read would give back (normalized, as
// tablerow's scans leave it), so that fn sees the same record on either
// path. Rows of ended tasks and sessions are not kept: their hot updates
// are done (MarkNotified is one statement that needs no copy).
//
// xmin is a 32-bit counter: a remembered row would have to survive four
// billion transactions of the server, unchanged and unevicted, to meet a
// new version with the same xmin. Two versions of one row share an xmin
// only when one transaction wrote both, and a remembered version is
// always the last its transaction wrote (it was read after the commit, or
// written by the store's own transaction, which writes a row once).

// The DB remembers at most knownRows rows of each table, of at most
// knownBytes in all (their text: a task's prompt and result may be long);
// past either, those used least recently are forgotten. A launch of
// 10,000 background children creates their records at once and starts
// them a lane at a time: the rows worth keeping are all of those queued.
const (
	knownRows  = 16384
	knownBytes = 16 << 20
)

// knownRow is a remembered row and its version.
type knownRow[T any] struct {
	id   string
	row  T
	xmin uint32
	size int
}

// known is the remembered rows of one table, by id, least recently used
// last. Safe for concurrent use.
type known[T any] struct {
	size func(*T) int
	keep func(*T) bool
	// maxRows and maxBytes are knownRows and knownBytes but in tests.
	maxRows, maxBytes int

	mu    sync.Mutex
	rows  map[string]*list.Element
	order list.List // of *knownRow[T], most recently used first
	bytes int
}

func newKnown[T any](size func(*T) int, keep func(*T) bool) *known[T] {
	return &known[T]{size: size, keep: keep, maxRows: knownRows, maxBytes: knownBytes, rows: map[string]*list.Element{}}
}

// get returns the remembered row id and its xmin.
func (k *known[T]) get(id string) (T, uint32, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.rows[id]
	if !ok {
		var zero T
		return zero, 0, false
	}
	k.order.MoveToFront(e)
	r := e.Value.(*knownRow[T])
	return r.row, r.xmin, true
}

// put remembers row id as the database holds it in the version xmin, or
// forgets it if it is not worth keeping.
func (k *known[T]) put(id string, row T, xmin uint32) {
	if !k.keep(&row) {
		k.forget(id)
		return
	}
	r := &knownRow[T]{id: id, row: row, xmin: xmin, size: k.size(&row)}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.rows[id]; ok {
		k.bytes -= e.Value.(*knownRow[T]).size
		e.Value = r
		k.order.MoveToFront(e)
	} else {
		k.rows[id] = k.order.PushFront(r)
	}
	k.bytes += r.size
	for len(k.rows) > k.maxRows || k.bytes > k.maxBytes {
		k.remove(k.order.Back())
	}
}

// forget drops row id: after a failure, or when it is no longer worth
// keeping.
func (k *known[T]) forget(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.rows[id]; ok {
		k.remove(e)
	}
}

// len is the number of rows remembered.
func (k *known[T]) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.rows)
}

func (k *known[T]) remove(e *list.Element) {
	r := e.Value.(*knownRow[T])
	k.order.Remove(e)
	delete(k.rows, r.id)
	k.bytes -= r.size
}

func newKnownTasks() *known[task.Task] {
	return newKnown(tablerow.TaskSize, func(t *task.Task) bool { return !t.Status.Terminal() })
}

func newKnownSessions() *known[session.Info] {
	return newKnown(tablerow.SessionSize, func(s *session.Info) bool { return !s.Status.Ended() })
}

// storedTask is t as a read of its row gives it back: its times cut to
// milliseconds, and without what the row does not hold (the runtime adds
// a task's model and turns from its session).
func storedTask(t task.Task) task.Task {
	t = tablerow.NormalizeTask(t)
	t.Model, t.NumTurns = "", 0
	return t
}

// withXmin scans a row of "xmin, <columns>" with a scan of the columns.
type withXmin struct {
	r    tablerow.Scanner
	xmin *uint32
}

func (w withXmin) Scan(dest ...any) error {
	return w.r.Scan(append([]any{w.xmin}, dest...)...)
}

// writeKnown runs sql, the update of rows remembered (its WHERE holds
// each row's version), and scans its one row into dest. It reports stale
// when a row was no longer the version given: the caller falls back to
// a read-modify-write, which judges the row as it is. The statement is
// its own transaction, and is retried through a passing connection
// failure (retry.go) even when it may have run: a run that committed made
// new versions, so the next matches nothing. Only that case is left
// unknown — no row matched after an attempt whose answer was lost, which
// may have been the update itself — and it is an error (ambiguous), as a
// read-modify-write's lost COMMIT is.
func (db *DB) writeKnown(ctx context.Context, sql string, args []any, dest ...any) (stale bool, _ error) {
	var lost error // the first failure after which the statement may have run
	err := db.retry(ctx, true, func(ctx context.Context, _ int) error {
		err := db.pool.QueryRow(ctx, sql, args...).Scan(dest...)
		if lost == nil && mayHaveCommitted(err) && !errors.Is(err, pgx.ErrNoRows) {
			lost = err
		}
		return err
	})
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return false, nil
	case !errors.Is(err, pgx.ErrNoRows) && !(errors.As(err, &pgErr) && pgErr.Code == staleCode):
		if lost != nil {
			return false, ambiguous{err}
		}
		return false, err
	case lost != nil:
		return false, ambiguous{fmt.Errorf("the row changed after an update whose answer was lost (%w): whether that update was stored is unknown", lost)}
	}
	return true, nil
}

// staleCode is the SQLSTATE of the error (division_by_zero) with which a
// statement of several updates of remembered rows aborts itself when one
// of them matched nothing (sessionTaskUpdateKnownSQL).
const staleCode = "22012"
