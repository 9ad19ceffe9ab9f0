package sqlite

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// A background child's lifecycle touches two records, its session's and its
// task's, at its start and at its end. Written apart, that is four writes
// (and a commit each when nothing else is queued); these write each pair in
// one transaction, which also means no reader and no crash ever sees one
// half without the other.

// CreateSessionTask records a new session and a new task in one
// transaction: both or neither. Either id already present is an error.
func (db *DB) CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error {
	if s.ID == "" {
		return fmt.Errorf("create session and task: the session id is empty")
	}
	if err := task.Validate(t); err != nil {
		return fmt.Errorf("create session %q and task: %w", s.ID, err)
	}
	err := db.write(ctx, func(tx *wtx) error {
		if err := insertSession(tx, s); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if err := insertTask(tx, t); err != nil {
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
// either fn stores nothing). It returns the task as stored.
func (db *DB) UpdateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error) {
	return db.updateSessionTask(ctx, sessionID, sfn, taskID, task.Fields(tfn))
}

// TransitionSessionTask is UpdateSession of sessionID and Transition of
// taskID in one transaction: both updates are stored, or neither (an error
// from either fn, or an event the task's status refuses, stores nothing).
// It returns the task as stored.
func (db *DB) TransitionSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) (task.Event, error)) (task.Task, error) {
	return db.updateSessionTask(ctx, sessionID, sfn, taskID, task.Step(tfn))
}

func (db *DB) updateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error) {
	var t task.Task
	err := db.write(ctx, func(tx *wtx) (err error) {
		if err := updateSession(tx, sessionID, sfn); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if t, err = updateTask(tx, taskID, tfn); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("update session %q and task %q: %w", sessionID, taskID, err)
	}
	return t, nil
}

// Stats are counts of the store's work since it was opened.
type Stats struct {
	// Commits is the number of transactions committed by the writer.
	Commits int64
	// Writes is the number of writes those transactions held.
	Writes int64
	// Reads is the number of rows updates read from the database, the
	// others being rows the writer remembered (rows.go).
	Reads int64
	// Reruns is the number of batches run again, each write in a
	// savepoint, because one of their writes failed (writer.commit).
	Reruns int64
}

// Stats reports the store's counts (benchmarks, and tests that count a
// code path's transactions).
func (db *DB) Stats() Stats {
	return Stats{Commits: db.wr.commits.Load(), Writes: db.wr.writes.Load(), Reads: db.wr.reads.Load(), Reruns: db.wr.reruns.Load()}
}
