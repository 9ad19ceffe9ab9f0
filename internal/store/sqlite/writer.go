package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// maxBatch bounds how many queued writes share one transaction, so that the
// first of them never waits behind an unbounded tail.
const maxBatch = 128

// errClosed is returned for a write submitted after Close.
var errClosed = errors.New("the database is closed")

// A write is one caller's unit of work: fn runs inside a transaction, on
// the writer goroutine, and the caller gets fn's error or the commit's.
//
// Group commit: the writer goroutine takes every write queued while the
// previous transaction ran (up to maxBatch) and runs them all in one
// IMMEDIATE transaction, then commits once; a write that fails is undone
// without touching its neighbours (commit says how). A caller returns only
// after the transaction that holds its write has committed (or failed):
// durability is what it was with one commit per write, and the commit's
// cost is shared.
type write struct {
	ctx   context.Context
	fn    func(*wtx) error
	state atomic.Int32 // queued, taken or abandoned
	done  chan outcome // buffered: the writer never blocks on it
}

const (
	queued int32 = iota
	taken
	abandoned
)

type outcome struct {
	err error
	// panicked holds what fn panicked with, re-raised in the caller's
	// goroutine so that a bug in fn surfaces where fn was written.
	panicked any
	stack    []byte
}

// writer is the goroutine that owns every write to the database: the only
// user of the writer pool's one connection once Open returns.
type writer struct {
	db *DB
	// written is called after each commit with the number of writes it
	// held (the checkpointer's nudge).
	written func(n int)

	mu     sync.Mutex
	queue  []*write
	closed bool
	wake   chan struct{} // cap 1: "the queue may have work"
	ended  chan struct{} // closed when run returns

	// commits counts committed transactions (tests, benchmarks).
	commits atomic.Int64
	// writes counts the writes those transactions held.
	writes atomic.Int64
	// reruns counts the batches that ran a second time, with savepoints,
	// because a write failed without one (commit).
	reruns atomic.Int64
	// reads counts the rows updates had to read (rows.go).
	reads atomic.Int64
	// rows are the rows the writer remembers (rows.go); only run's
	// goroutine touches them.
	rows *rowMemory
	// queuedHook, if set before the first write, sees the queue's length
	// after each write joins it (tests).
	queuedHook func(n int)
}

func newWriter(db *DB, written func(int)) *writer {
	w := &writer{db: db, written: written, wake: make(chan struct{}, 1), ended: make(chan struct{}), rows: newRowMemory()}
	go w.run()
	return w
}

// do queues fn and waits for the outcome of the transaction that runs it.
// A caller whose ctx ends while its write is still queued gets ctx's error
// and the write never runs; once the writer has taken it, the caller waits
// for the commit, so that a nil error always means committed and an error
// (other than ctx's) always means not written.
func (w *writer) do(ctx context.Context, fn func(*wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &write{ctx: ctx, fn: fn, done: make(chan outcome, 1)}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.queue = append(w.queue, op)
	n := len(w.queue)
	w.mu.Unlock()
	if w.queuedHook != nil {
		w.queuedHook(n)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}

	var out outcome
	select {
	case out = <-op.done:
	case <-ctx.Done():
		if op.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		out = <-op.done
	}
	if out.stack != nil {
		panic(fmt.Sprintf("%v\n\nin a store write, on the writer goroutine:\n%s", out.panicked, out.stack))
	}
	return out.err
}

// close stops taking writes, lets the writer finish those already queued,
// and waits for it to end.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.ended
}

func (w *writer) run() {
	defer close(w.ended)
	for {
		batch, ok := w.next()
		if !ok {
			return
		}
		w.commit(batch)
	}
}

// next waits for queued writes and takes up to maxBatch of them; false
// once the writer is closed and its queue empty.
//
// Before it looks at the queue it yields the processor to the goroutines
// that are ready to run. Many of them are about to queue a write — the
// callers the last commit released, a lane of children each recording
// its start or end — and those that do join this batch instead of each
// starting the next one: every commit writes each page its writes
// touched to the WAL once (a task and its session are in a dozen tables
// and indexes), so fewer, larger transactions write fewer pages. With
// 1,000 background children on two cores this cut the commits' CPU by
// three quarters and halved the notification latency's tail. A yield is
// no wait: with nothing else ready to run, the writer goes on at once.
func (w *writer) next() ([]*write, bool) {
	for {
		runtime.Gosched()
		w.mu.Lock()
		if n := min(len(w.queue), maxBatch); n > 0 {
			batch := make([]*write, n)
			copy(batch, w.queue)
			rest := copy(w.queue, w.queue[n:])
			clear(w.queue[rest:])
			w.queue = w.queue[:rest]
			w.mu.Unlock()
			return batch, true
		}
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return nil, false
		}
		<-w.wake
	}
}

// commit runs batch in one transaction.
//
// A write that fails must be undone without its neighbours, and a
// savepoint around each write would do that; but in a transaction of many
// writes each savepoint also copies every page its write touches, and
// writes that fail are rare (a duplicate id, an event the status refuses,
// a bug). So the writes first run without savepoints; if one fails, that
// transaction is rolled back and the batch runs again, each write in a
// savepoint of its own. A write's fn may therefore run twice, as it may
// on PostgreSQL, and gets the same rows the second time.
func (w *writer) commit(batch []*write) {
	live := batch[:0]
	for _, op := range batch {
		if !op.state.CompareAndSwap(queued, taken) {
			continue // its caller gave up while it waited
		}
		if err := op.ctx.Err(); err != nil {
			op.done <- outcome{err: err}
			continue
		}
		live = append(live, op)
	}
	if len(live) == 0 {
		return
	}
	outs, end := w.transact(live, false)
	if end == undone {
		w.reruns.Add(1)
		outs, end = w.transact(live, true)
	}
	for i, op := range live {
		op.done <- outs[i]
	}
	if w.written != nil && end == committed {
		w.written(len(live))
	}
}

// How a batch's transaction ended.
type txEnd int

const (
	committed txEnd = iota
	failed          // rolled back; outs say why, write by write
	undone          // rolled back to run again, each write in a savepoint
)

// transact runs live in one transaction and returns their outcomes. With
// savepoints, each write runs in one and a failed write is undone alone;
// without, the first write that fails in a transaction of more than one
// rolls it back: undone, nothing written, nothing to report.
func (w *writer) transact(live []*write, savepoints bool) ([]outcome, txEnd) {
	outs := make([]outcome, len(live))
	fail := func(err error) ([]outcome, txEnd) {
		for i := range outs {
			if outs[i].err == nil && outs[i].stack == nil {
				outs[i].err = err
			}
		}
		return outs, failed
	}

	// The statements run without the callers' contexts: cancelling one
	// caller must not interrupt a transaction that carries others' writes.
	ctx := context.Background()
	tx, err := w.db.w.BeginTx(ctx, nil)
	if err != nil {
		w.rows.forget()
		return fail(fmt.Errorf("begin: %w", err))
	}
	t := &wtx{ctx: ctx, tx: tx, cache: w.db.ws, stmts: map[string]*sql.Stmt{}, rows: w.rows, reads: &w.reads}
	defer t.prepareMissed() // deferred calls run after the Commit or Rollback below
	end := failed
	defer func() {
		if end != committed {
			w.rows.forget()
		}
	}()
	t.checkRows()
	for i, op := range live {
		if savepoints {
			if _, err := t.exec(`SAVEPOINT write`); err != nil {
				tx.Rollback()
				return fail(fmt.Errorf("savepoint: %w", err))
			}
		}
		outs[i] = t.run(op)
		ok := outs[i].err == nil && outs[i].stack == nil
		switch {
		case !ok && !savepoints:
			// Alone in its transaction, a write's failure is the
			// transaction's; among others, they run again.
			tx.Rollback()
			if len(live) > 1 {
				end = undone
				return nil, end
			}
			return outs, failed
		case !ok:
			// Failing here means the transaction itself is gone
			// (SQLite rolls back on some errors): no write of the
			// batch may be reported as done.
			if _, err := t.exec(`ROLLBACK TO write`); err != nil {
				tx.Rollback()
				return fail(fmt.Errorf("undo a failed write: %w", err))
			}
		}
		if savepoints {
			if _, err := t.exec(`RELEASE write`); err != nil {
				tx.Rollback()
				return fail(fmt.Errorf("release savepoint: %w", err))
			}
		}
		t.endWrite(ok)
	}
	changes := t.totalChanges()
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	end = committed
	t.commitRows(changes)
	w.commits.Add(1)
	w.writes.Add(int64(len(live)))
	return outs, end
}

// wtx is a batch's transaction as one write sees it: statements prepared
// once per DB (stmtCache), bound to this transaction on first use.
type wtx struct {
	ctx   context.Context
	tx    *sql.Tx
	cache *stmtCache
	stmts map[string]*sql.Stmt
	// missed are the statements this transaction found uncached.
	missed []string
	// rows are the writer's remembered rows, nil when this transaction
	// may not use them; reads counts the rows it read instead (rows.go).
	rows  *rowMemory
	reads *atomic.Int64
}

// prepareMissed caches the statements t had to prepare for itself; it runs
// after t ended, when the writer's connection is free. A statement that
// fails to prepare is simply prepared again next time.
func (t *wtx) prepareMissed() {
	for _, q := range t.missed {
		_, _ = t.cache.get(t.ctx, q) // a failure is prepared again next time
	}
}

// run calls op's fn, turning a panic into an outcome.
func (t *wtx) run(op *write) (out outcome) {
	defer func() {
		if v := recover(); v != nil {
			out = outcome{panicked: v, stack: debug.Stack()}
		}
	}()
	return outcome{err: op.fn(t)}
}

func (t *wtx) stmt(query string) (*sql.Stmt, error) {
	if s, ok := t.stmts[query]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if p := t.cache.lookup(query); p != nil {
		s = t.tx.StmtContext(t.ctx, p)
	} else {
		// Preparing on the pool would wait for its one connection,
		// which this transaction holds: prepare for this transaction,
		// and on the pool once it is over (prepareMissed).
		var err error
		if s, err = t.tx.PrepareContext(t.ctx, query); err != nil {
			return nil, err
		}
		t.missed = append(t.missed, query)
	}
	t.stmts[query] = s
	return s, nil
}

func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(t.ctx, args...)
}

func (t *wtx) queryRow(query string, args ...any) row {
	s, err := t.stmt(query)
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(t.ctx, args...)
}

// errRow is a row whose query could not even be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(t.ctx, args...)
}
