package sqlite

import (
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// The writer remembers the rows it last read or wrote, so that an update
// of a row it knows (a background child's record, started, then ended,
// moments after the writer created it) skips reading it back: through
// database/sql and the driver, reading a 29-column row costs more than
// updating the few columns that changed.
//
// A remembered row is trusted only while nobody else can have written
// it. Every write goes through the writer's one connection; a change by
// any other connection — another process, another DB on the same file —
// changes that connection's PRAGMA data_version. So each transaction
// first reads data_version and total_changes() (which only this
// connection's own statements move) and compares them with what they
// were when the writer's last transaction committed; any difference —
// someone else wrote, or database/sql replaced the connection (whose
// counts then start again) — and everything remembered is forgotten.
// The check runs inside the IMMEDIATE transaction, under the write lock:
// nobody can write between it and the transaction's own reads.
//
// A transaction's reads and writes are kept apart from what is
// remembered until it commits, and a write's apart from its
// transaction's until the write succeeds: a write undone, or a
// transaction that fails or runs again, leaves nothing behind.

// The writer remembers at most maxRememberedRows rows of each table, of
// at most maxRememberedBytes in all (their text: a task's prompt and
// result may be long); past either, some are forgotten (an arbitrary
// choice of them). The rows worth remembering are those of the runs in
// flight, a lane's worth and those queued for it: a launch of 10,000
// background agents queues 10,000, each read back when it starts unless
// remembered. At 4,096 rows and 2 MB a run of 10,000 read about half of
// them back, 0.45 s of its writer's CPU; the limits below hold them all
// for some 6 MB of tasks and 5 MB of sessions (docs/performance.md).
const (
	maxRememberedRows  = 16384
	maxRememberedBytes = 8 << 20
)

// rowMemory is what the writer remembers, owned by its goroutine.
type rowMemory struct {
	tasks    rowSet[task.Task]
	sessions rowSet[session.Info]
	// changes and version are total_changes() and data_version as the
	// writer's last transaction committed; changes is -1 when unknown.
	changes, version int64
}

func newRowMemory() *rowMemory {
	return &rowMemory{tasks: newRowSet(tablerow.TaskSize), sessions: newRowSet(tablerow.SessionSize), changes: -1}
}

// begin checks, at the start of a transaction, that what is remembered
// still holds; changes and version are the connection's counts now.
func (m *rowMemory) begin(changes, version int64) {
	if changes != m.changes || version != m.version || m.changes < 0 {
		m.forget()
	}
	m.version = version
}

// commit keeps what the transaction read and wrote; changes is
// total_changes() just before it committed.
func (m *rowMemory) commit(changes int64) {
	m.tasks.commit()
	m.sessions.commit()
	m.changes = changes
}

// endWrite ends one write of the transaction: what it read and wrote
// joins the transaction's if it succeeded, and is dropped if not.
func (m *rowMemory) endWrite(ok bool) {
	m.tasks.endWrite(ok)
	m.sessions.endWrite(ok)
}

// forget drops everything remembered and the current transaction's
// rows: after a failed transaction, or when another writer may have
// written.
func (m *rowMemory) forget() {
	m.tasks.forget()
	m.sessions.forget()
	m.changes = -1
}

// rowSet is one table's rows, by id: as committed, as the current
// transaction has them, and as its current write has them. In tx and
// write a nil row is one to read from the database again. A row, once
// put, is never changed: the maps share it.
type rowSet[T any] struct {
	committed, tx, write map[string]*T
	// size is a row's size in bytes, roughly; bytes is the committed
	// rows'.
	size  func(*T) int
	bytes int
}

func newRowSet[T any](size func(*T) int) rowSet[T] {
	return rowSet[T]{committed: map[string]*T{}, tx: map[string]*T{}, write: map[string]*T{}, size: size}
}

// get returns the row id as the current write would read it, if known.
func (s *rowSet[T]) get(id string) (T, bool) {
	for _, m := range []map[string]*T{s.write, s.tx} {
		if r, ok := m[id]; ok {
			if r == nil {
				var zero T
				return zero, false
			}
			return *r, true
		}
	}
	if r, ok := s.committed[id]; ok {
		return *r, true
	}
	var zero T
	return zero, false
}

// put records row id as the current write leaves it (or read it).
func (s *rowSet[T]) put(id string, row T) { s.write[id] = &row }

// unknown marks row id as changed by the current write in a way not
// worth following: it is read again next time.
func (s *rowSet[T]) unknown(id string) { s.write[id] = nil }

func (s *rowSet[T]) endWrite(ok bool) {
	if ok {
		for id, r := range s.write {
			s.tx[id] = r
		}
	}
	clear(s.write)
}

func (s *rowSet[T]) commit() {
	for id, r := range s.tx {
		if old, ok := s.committed[id]; ok {
			s.bytes -= s.size(old)
			delete(s.committed, id)
		}
		if r != nil {
			s.committed[id] = r
			s.bytes += s.size(r)
		}
	}
	clear(s.tx)
	for id, r := range s.committed { // map order: arbitrary rows go
		if len(s.committed) <= maxRememberedRows && s.bytes <= maxRememberedBytes {
			break
		}
		s.bytes -= s.size(r)
		delete(s.committed, id)
	}
}

func (s *rowSet[T]) forget() {
	clear(s.committed)
	s.bytes = 0
	clear(s.tx)
	clear(s.write)
}

// taskAsStored is t as reading it back gives it: its times cut to
// milliseconds, in UTC (tablerow.NormalizeTask), and a negative zero cost
// positive, since SQLite stores a whole REAL as an integer.
func taskAsStored(t task.Task) task.Task {
	t = tablerow.NormalizeTask(t)
	t.CostUSD = positiveZero(t.CostUSD)
	return t
}

// sessionAsStored is s as reading it back gives it (taskAsStored).
func sessionAsStored(s session.Info) session.Info {
	s = tablerow.NormalizeSession(s)
	s.CostUSD = positiveZero(s.CostUSD)
	return s
}

// positiveZero is c with a cost of -0 made +0, whatever it is known to be.
func positiveZero(c llm.Cost) llm.Cost {
	if v, known := c.USD(); v == 0 {
		c = llm.Cost{}
		if !known {
			c = llm.UnknownCost()
		}
	}
	return c
}

const (
	// rowCheckSQL reads the counts rowMemory.begin compares.
	rowCheckSQL     = `SELECT total_changes(), data_version FROM pragma_data_version`
	totalChangesSQL = `SELECT total_changes()`
)

// checkRows starts t's use of the writer's memory of rows; without the
// counts, t reads every row it needs.
func (t *wtx) checkRows() {
	var changes, version int64
	if err := t.queryRow(rowCheckSQL).Scan(&changes, &version); err != nil {
		t.rows.forget()
		t.rows = nil
		return
	}
	t.rows.begin(changes, version)
}

// totalChanges is total_changes() before t commits, for commitRows.
func (t *wtx) totalChanges() int64 {
	if t.rows == nil {
		return -1
	}
	var n int64
	if err := t.queryRow(totalChangesSQL).Scan(&n); err != nil {
		t.rows.forget()
		t.rows = nil
		return -1
	}
	return n
}

// commitRows keeps what t read and wrote, once it committed; changes is
// totalChanges.
func (t *wtx) commitRows(changes int64) {
	if t.rows != nil {
		t.rows.commit(changes)
	}
}

// endWrite ends one write of t's transaction.
func (t *wtx) endWrite(ok bool) {
	if t.rows != nil {
		t.rows.endWrite(ok)
	}
}

// readTask returns task id as the current write sees it, remembered or
// read; sql.ErrNoRows if there is none.
func (t *wtx) readTask(id string) (task.Task, error) {
	var set *rowSet[task.Task]
	if t.rows != nil {
		set = &t.rows.tasks
	}
	return readRow(t, set, selectTaskSQL, id, tablerow.ScanTask)
}

// readSession is readTask for a session.
func (t *wtx) readSession(id string) (session.Info, error) {
	var set *rowSet[session.Info]
	if t.rows != nil {
		set = &t.rows.sessions
	}
	return readRow(t, set, selectSessionSQL, id, tablerow.ScanSession)
}

// readRow is row id from set, or read by query and remembered in set (nil:
// nothing is remembered).
func readRow[R any](t *wtx, set *rowSet[R], query, id string, scan func(tablerow.Scanner) (R, error)) (R, error) {
	if set != nil {
		if r, ok := set.get(id); ok {
			return r, nil
		}
	}
	t.reads.Add(1)
	r, err := scan(t.queryRow(query, id))
	if err == nil && set != nil {
		set.put(id, r)
	}
	return r, err
}

// wroteTask records tk as the current write stored it.
func (t *wtx) wroteTask(tk task.Task) {
	if t.rows != nil {
		t.rows.tasks.put(tk.ID, tk)
	}
}

// wroteSession records s as the current write stored it.
func (t *wtx) wroteSession(s session.Info) {
	if t.rows != nil {
		t.rows.sessions.put(s.ID, s)
	}
}

// markedNotified records that the current write set task id's notified
// flag.
func (t *wtx) markedNotified(id string) {
	if t.rows == nil {
		return
	}
	if r, ok := t.rows.tasks.get(id); ok {
		r.Notified = true
		t.rows.tasks.put(id, r)
	} else {
		t.rows.tasks.unknown(id)
	}
}
