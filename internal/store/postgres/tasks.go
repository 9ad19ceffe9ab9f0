package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
)

var _ task.Store = (*DB)(nil)

// CreateTask implements task.Store.
func (db *DB) CreateTask(ctx context.Context, t task.Task) error {
	if err := task.Validate(t); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	var xmin uint32
	err := db.retry(ctx, false, func(ctx context.Context, _ int) (err error) {
		xmin, err = db.insertTask(ctx, t)
		return err
	})
	if err != nil {
		return fmt.Errorf("create task %q: %w", t.ID, err)
	}
	db.tasks.put(t.ID, storedTask(t), xmin)
	return nil
}

const (
	insertTaskSQL = `INSERT INTO tasks (` + tablerow.TaskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
	$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)
	ON CONFLICT (id) DO NOTHING RETURNING xmin`
	// selectTaskSQL reads a task's row with its version first.
	selectTaskSQL = `SELECT xmin, ` + tablerow.TaskColumns + ` FROM tasks WHERE id = $1`
)

// insertTask adds t's row and returns its version; an id already present
// is an error.
func (db *DB) insertTask(ctx context.Context, t task.Task) (uint32, error) {
	var xmin uint32
	err := db.pool.QueryRow(ctx, insertTaskSQL, append([]any{t.ID}, tablerow.TaskValues(t)...)...).Scan(&xmin)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errors.New("a task with this id already exists")
	}
	return xmin, err
}

// GetTask implements task.Store.
func (db *DB) GetTask(ctx context.Context, id string) (task.Task, error) {
	var (
		t    task.Task
		xmin uint32
	)
	err := db.queryRow(ctx, func(r pgx.Row) (err error) { t, err = tablerow.ScanTask(withXmin{r, &xmin}); return err }, selectTaskSQL, id)
	if errors.Is(err, pgx.ErrNoRows) {
		db.tasks.forget(id)
		return task.Task{}, fmt.Errorf("get task %q: %w", id, task.ErrNotFound)
	} else if err != nil {
		return task.Task{}, fmt.Errorf("get task %q: %w", id, err)
	}
	db.tasks.put(id, t, xmin)
	return t, nil
}

// UpdateTask implements task.Store: in one statement on the row as this
// DB last knew it, if it is still that version (known.go); otherwise the
// row is read FOR UPDATE and stays locked until the write commits
// (doc.go), in two round trips (rmw).
func (db *DB) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	return db.updateTask(ctx, id, task.Fields(fn))
}

// Transition implements task.Store, as UpdateTask: the event is applied to
// the row as read FOR UPDATE, so of two racing events the second waits for
// the first's commit and is judged on its status.
func (db *DB) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	return db.updateTask(ctx, id, task.Step(fn))
}

func (db *DB) updateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	if t, done, err := db.updateKnownTask(ctx, id, fn); done {
		if err != nil {
			return task.Task{}, fmt.Errorf("update task %q: %w", id, err)
		}
		return t, nil
	}
	u := &taskUpdater{id: id, fn: fn}
	if err := db.rmw(ctx, u.read, u.scan, u.write); err != nil {
		db.tasks.forget(id)
		return task.Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	db.tasks.put(id, storedTask(u.t), u.xmin)
	return u.t, nil
}

// updateKnownTask runs fn on the row of task id as this DB remembers it
// and writes the result in one autocommit statement, if the row is still
// that version (known.go). done is false when the update is to be run as
// a read-modify-write instead: nothing remembered, the row changed since,
// or fn refusing the remembered copy — an error of fn's may judge a stale row (a status
// another node has since changed), and only the row read under its lock
// can tell, so the read-modify-write runs fn again and returns its
// verdict.
func (db *DB) updateKnownTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, bool, error) {
	t, xmin, ok := db.tasks.get(id)
	if !ok {
		return task.Task{}, false, nil
	}
	// Whatever happens next, the remembered row is put back only as
	// the statement below leaves it.
	db.tasks.forget(id)
	before := tablerow.TaskValues(t)
	if err := checkTask(id, &t, fn); err != nil {
		return task.Task{}, false, nil
	}
	var next uint32
	q, args := updateSQL("tasks", tablerow.TaskColumnNames, before, tablerow.TaskValues(t), id, &xmin)
	if stale, err := db.writeKnown(ctx, q, args, &next); stale || err != nil {
		return task.Task{}, !stale, err
	}
	t = tablerow.NormalizeTask(t)
	db.tasks.put(id, storedTask(t), next)
	return t, true, nil
}

// checkTask applies fn to t, the row of task id, and checks the result
// as every update does.
func checkTask(id string, t *task.Task, fn func(*task.Task) error) error {
	if err := fn(t); err != nil {
		return err
	}
	if t.ID != id {
		return fmt.Errorf("the update changed the id to %q", t.ID)
	}
	return task.Validate(*t)
}

// taskUpdater is one task's part of a read-modify-write (rmw): it reads
// the row FOR UPDATE, applies fn and writes the result, whose version is
// xmin once the writes have run.
type taskUpdater struct {
	id   string
	fn   func(*task.Task) error
	t    task.Task
	xmin uint32
}

func (u *taskUpdater) read(b *pgx.Batch) { b.Queue(selectTaskSQL+` FOR UPDATE`, u.id) }

func (u *taskUpdater) scan(br pgx.BatchResults) error {
	t, err := tablerow.ScanTask(withXmin{br.QueryRow(), &u.xmin})
	if errors.Is(err, pgx.ErrNoRows) {
		return task.ErrNotFound
	}
	u.t = t
	return err
}

func (u *taskUpdater) write(b *pgx.Batch) error {
	before := tablerow.TaskValues(u.t)
	if err := checkTask(u.id, &u.t, u.fn); err != nil {
		return err
	}
	q, args := updateSQL("tasks", tablerow.TaskColumnNames, before, tablerow.TaskValues(u.t), u.id, nil)
	b.Queue(q, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&u.xmin) })
	u.t = tablerow.NormalizeTask(u.t)
	return nil
}

// ListTasks implements task.Store.
func (db *DB) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	var w where
	for _, c := range []struct{ col, v string }{
		{"root_session_id", f.RootSessionID}, {"parent_session_id", f.ParentSessionID}, {"owner", f.Owner},
	} {
		if c.v != "" {
			w.add(c.col+" = ?", c.v)
		}
	}
	if len(f.Statuses) > 0 {
		w.add("status = ANY(?)", statuses(f.Statuses))
	}
	if !f.FinishedBefore.IsZero() {
		w.add("finished_ms < ?", f.FinishedBefore.UnixMilli())
	}
	if f.Unarchived {
		w.add("NOT archived")
	}
	// A task with no creation time sorts as the oldest, as in the SQLite
	// store (PostgreSQL would put NULLs first in a descending order).
	q := w.sql(`SELECT `+tablerow.TaskColumns+` FROM tasks`, "created_ms DESC NULLS LAST, id DESC", f.Limit)
	var out []task.Task
	err := db.query(ctx, func(rows pgx.Rows) (err error) {
		out, err = tablerow.Collect(rows, tablerow.ScanTask)
		return err
	}, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// MarkNotified implements task.Store. Its one UPDATE flips the flag only
// of a finished task that has it unset: a concurrent call (on any node)
// waits for the row lock, then re-checks the condition on the row as the
// first left it, so exactly one call wins. Only a call that flipped
// nothing reads the row, to tell why.
func (db *DB) MarkNotified(ctx context.Context, id string) (bool, error) {
	terminal := statuses([]task.Status{task.StatusCompleted, task.StatusFailed, task.StatusKilled, task.StatusTimeout})
	var won bool
	err := db.retry(ctx, false, func(ctx context.Context, attempt int) error {
		err := db.pool.QueryRow(ctx, `UPDATE tasks SET notified = true WHERE id = $1 AND NOT notified AND status = ANY($2) RETURNING true`, id, terminal).Scan(&won)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var (
			status   string
			notified bool
		)
		err = db.pool.QueryRow(ctx, `SELECT status, notified FROM tasks WHERE id = $1`, id).Scan(&status, &notified)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return task.ErrNotFound
		case err != nil:
			return err
		case !task.Status(status).Terminal():
			return fmt.Errorf("%w (status %s)", task.ErrNotTerminal, status)
		}
		return nil // someone else was first
	})
	if err != nil {
		return false, fmt.Errorf("mark task %q notified: %w", id, err)
	}
	return won, nil
}
