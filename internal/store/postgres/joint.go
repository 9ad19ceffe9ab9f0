package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// A background child's lifecycle touches two records, its session's and its
// task's, at its start and at its end; these write each pair in one
// transaction, so no reader on any node and no crash ever sees one half
// without the other (as the SQLite store's joint writes).

// CreateSessionTask records a new session and a new task in one
// transaction: both or neither. Either id already present is an error.
func (db *DB) CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error {
	if s.ID == "" {
		return fmt.Errorf("create session and task: the session id is empty")
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("create session %q and task: %w", s.ID, err)
	}
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if err := insertSession(ctx, tx, s); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if err := insertTask(ctx, tx, t); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create session %q and task %q: %w", s.ID, t.ID, err)
	}
	return nil
}

// UpdateSessionTask is UpdateSession of sessionID and UpdateTask of taskID
// in one transaction: both updates are stored, or neither (an error from
// either fn stores nothing). It returns the task as stored. The session's
// row is always locked before the task's, so two of these never deadlock.
func (db *DB) UpdateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error) {
	var t task.Task
	err := db.inTx(ctx, func(tx pgx.Tx) (err error) {
		if err := updateSession(ctx, tx, sessionID, sfn); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if t, err = updateTask(ctx, tx, taskID, tfn); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("update session %q and task %q: %w", sessionID, taskID, err)
	}
	return t, nil
}
