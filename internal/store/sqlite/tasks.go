package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
)

var _ task.Store = (*DB)(nil)

// terminalStatuses is the SQL list of task.Status values for which
// Status.Terminal is true.
const terminalStatuses = `('completed', 'failed', 'killed', 'timeout')`

// CreateTask implements task.Store.
func (db *DB) CreateTask(ctx context.Context, t task.Task) error {
	if err := task.Validate(t); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	if err := db.write(ctx, func(tx *wtx) error { return insertTask(tx, t) }); err != nil {
		return fmt.Errorf("create task %q: %w", t.ID, err)
	}
	return nil
}

const (
	insertTaskSQL = `INSERT INTO tasks (` + tablerow.TaskColumns + `) VALUES (?` + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?" + `)
	ON CONFLICT (id) DO NOTHING`
	selectTaskSQL = `SELECT ` + tablerow.TaskColumns + ` FROM tasks WHERE id = ?`
)

// insertTask adds t's row; an id already present is an error.
func insertTask(tx *wtx, t task.Task) error {
	res, err := tx.exec(insertTaskSQL, append([]any{t.ID}, tablerow.TaskValues(t)...)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errors.New("a task with this id already exists")
	}
	tx.wroteTask(taskAsStored(t))
	return nil
}

// GetTask implements task.Store.
func (db *DB) GetTask(ctx context.Context, id string) (task.Task, error) {
	t, err := tablerow.ScanTask(db.rs.queryRow(ctx, selectTaskSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, fmt.Errorf("get task %q: %w", id, task.ErrNotFound)
	} else if err != nil {
		return task.Task{}, fmt.Errorf("get task %q: %w", id, err)
	}
	return t, nil
}

// UpdateTask implements task.Store. The read and the write share one
// IMMEDIATE transaction, so the write lock is held (across processes too)
// from before the read until the commit; fn runs inside it.
func (db *DB) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	return db.updateTask(ctx, id, task.Fields(fn))
}

// Transition implements task.Store, as UpdateTask: the event is applied to
// the record read inside the write transaction, so of two racing events
// the second is judged on the first's status.
func (db *DB) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	return db.updateTask(ctx, id, task.Step(fn))
}

func (db *DB) updateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	var t task.Task
	err := db.write(ctx, func(tx *wtx) (err error) {
		t, err = updateTask(tx, id, fn)
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	return t, nil
}

// updateTask is an update inside tx; fn is task.Fields' or task.Step's
// wrapping of the caller's. It writes only the columns fn changed
// (update.go).
func updateTask(tx *wtx, id string, fn func(*task.Task) error) (task.Task, error) {
	t, err := tx.readTask(id)
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, task.ErrNotFound
	} else if err != nil {
		return task.Task{}, err
	}
	before := tablerow.TaskValues(t)
	if err := fn(&t); err != nil {
		return task.Task{}, err
	}
	if t.ID != id {
		return task.Task{}, fmt.Errorf("the update changed the id to %q", t.ID)
	}
	if err := task.Validate(t); err != nil {
		return task.Task{}, err
	}
	if q, args := changedSet("tasks", taskColumns, before, tablerow.TaskValues(t), id); q != "" {
		if _, err := tx.exec(q, args...); err != nil {
			return task.Task{}, err
		}
	}
	t = taskAsStored(t)
	tx.wroteTask(t)
	return t, nil
}

// ListTasks implements task.Store.
func (db *DB) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	q, args := listTasksSQL(f)
	out, err := queryAll(ctx, db.rs, tablerow.ScanTask, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// MarkNotified implements task.Store. The conditional UPDATE is the whole
// protocol: SQLite runs one writer at a time, across processes too, so of
// all the calls only the first finds notified = 0 and changes a row. The
// transaction exists only to explain a call that changed nothing, from the
// same state the UPDATE saw.
func (db *DB) MarkNotified(ctx context.Context, id string) (bool, error) {
	var won bool
	err := db.write(ctx, func(tx *wtx) (err error) {
		won, err = markNotified(tx, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("mark task %q notified: %w", id, err)
	}
	return won, nil
}

const (
	markNotifiedSQL = `UPDATE tasks SET notified = 1 WHERE id = ? AND notified = 0 AND status IN ` + terminalStatuses
	notifiedSQL     = `SELECT status, notified FROM tasks WHERE id = ?`
)

// markNotified is MarkNotified inside tx.
func markNotified(tx *wtx, id string) (bool, error) {
	res, err := tx.exec(markNotifiedSQL, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 1 {
		tx.markedNotified(id)
		return true, nil
	}
	var status string
	var notified bool
	err = tx.queryRow(notifiedSQL, id).Scan(&status, &notified)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, task.ErrNotFound
	case err != nil:
		return false, err
	case !task.Status(status).Terminal():
		return false, fmt.Errorf("%w (status %s)", task.ErrNotTerminal, status)
	}
	return false, nil // someone else was first
}

// listTasksSQL is ListTasks' query for f (valid), newest first, as
// an index yields them (TestListingsWalkAnIndex).
func listTasksSQL(f task.Filter) (string, []any) {
	var (
		where []string
		args  []any
	)
	for _, c := range []struct{ col, v string }{
		{"root_session_id", f.RootSessionID}, {"parent_session_id", f.ParentSessionID}, {"owner", f.Owner},
	} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	if len(f.Statuses) > 0 {
		where, args = statusIn(where, args, f.Statuses)
	}
	if !f.FinishedBefore.IsZero() {
		where, args = append(where, "finished_ms < ?"), append(args, f.FinishedBefore.UnixMilli())
	}
	if f.Unarchived {
		where = append(where, "archived = 0")
	}
	q := `SELECT ` + tablerow.TaskColumns + ` FROM tasks`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_ms DESC, id DESC"
	return q + limit(f.Limit), args
}
