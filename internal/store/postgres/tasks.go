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

// taskUpdate sets every column after id, in tablerow.TaskColumns order.
const taskUpdate = `UPDATE tasks SET kind = $1, agent = $2, name = $3, description = $4, prompt = $5,
	parent_session_id = $6, root_session_id = $7, child_session_id = $8, tool_use_id = $9,
	status = $10, result = $11, error = $12,
	input_tokens = $13, output_tokens = $14, cache_creation_input_tokens = $15, cache_read_input_tokens = $16,
	cost_usd = $17, tool_uses = $18, output_file = $19, notified = $20, cancel_requested = $21, owner = $22,
	heartbeat_ms = $23, created_ms = $24, started_ms = $25, finished_ms = $26, progress = $27, archived = $28,
	cost_unknown = $29, remote_task_id = $30
	WHERE id = $31`

// CreateTask implements task.Store.
func (db *DB) CreateTask(ctx context.Context, t task.Task) error {
	if err := task.Validate(t); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	if err := db.retry(ctx, false, func(ctx context.Context, _ int) error { return insertTask(ctx, db.pool, t) }); err != nil {
		return fmt.Errorf("create task %q: %w", t.ID, err)
	}
	return nil
}

const (
	insertTaskSQL = `INSERT INTO tasks (` + tablerow.TaskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
	$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)
	ON CONFLICT (id) DO NOTHING`
	selectTaskSQL = `SELECT ` + tablerow.TaskColumns + ` FROM tasks WHERE id = $1`
)

// insertTask adds t's row; an id already present is an error.
func insertTask(ctx context.Context, q execer, t task.Task) error {
	tag, err := q.Exec(ctx, insertTaskSQL, append([]any{t.ID}, tablerow.TaskValues(t)...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errors.New("a task with this id already exists")
	}
	return nil
}

// GetTask implements task.Store.
func (db *DB) GetTask(ctx context.Context, id string) (task.Task, error) {
	var t task.Task
	err := db.queryRow(ctx, func(r pgx.Row) (err error) { t, err = tablerow.ScanTask(r); return err }, selectTaskSQL, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return task.Task{}, fmt.Errorf("get task %q: %w", id, task.ErrNotFound)
	} else if err != nil {
		return task.Task{}, fmt.Errorf("get task %q: %w", id, err)
	}
	return t, nil
}

// UpdateTask implements task.Store: the row is read FOR UPDATE and stays
// locked until the write commits (doc.go), in two round trips (rmw).
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
	u := &taskUpdater{id: id, fn: fn}
	if err := db.rmw(ctx, u.read, u.scan, u.write); err != nil {
		return task.Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	return u.t, nil
}

// taskUpdater is one task's part of a read-modify-write (rmw): it reads
// the row FOR UPDATE, applies fn and writes the result.
type taskUpdater struct {
	id string
	fn func(*task.Task) error
	t  task.Task
}

func (u *taskUpdater) read(b *pgx.Batch) { b.Queue(selectTaskSQL+` FOR UPDATE`, u.id) }

func (u *taskUpdater) scan(br pgx.BatchResults) error {
	t, err := tablerow.ScanTask(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return task.ErrNotFound
	}
	u.t = t
	return err
}

func (u *taskUpdater) write(b *pgx.Batch) error {
	if err := u.fn(&u.t); err != nil {
		return err
	}
	if u.t.ID != u.id {
		return fmt.Errorf("the update changed the id to %q", u.t.ID)
	}
	if err := task.Validate(u.t); err != nil {
		return err
	}
	b.Queue(taskUpdate, append(tablerow.TaskValues(u.t), u.id)...)
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
