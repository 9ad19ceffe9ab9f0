package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/record"
)

// Tasks lists task records as the SDK shows them, newest first: the tasks
// of the run tree of rootSessionID, or all when it is "".
func (a *App) Tasks(ctx context.Context, rootSessionID string, limit int) ([]record.Task, error) {
	ts, err := a.DB.ListTasks(ctx, task.Filter{RootSessionID: rootSessionID, Limit: limit})
	if err != nil {
		return nil, err
	}
	for i := range ts {
		if err := a.withSession(ctx, &ts[i]); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// Task is one task record as the SDK shows it.
func (a *App) Task(ctx context.Context, id string) (record.Task, error) {
	t, err := a.DB.GetTask(ctx, id)
	if err != nil {
		return record.Task{}, err
	}
	return t, a.withSession(ctx, &t)
}

// withSession adds what t's child session records (its model and turns),
// when it has one.
func (a *App) withSession(ctx context.Context, t *record.Task) error {
	if t.ChildSessionID == "" {
		return nil
	}
	info, err := a.DB.GetSession(ctx, t.ChildSessionID)
	if errors.Is(err, session.ErrNotFound) {
		return nil // still waiting for a place in its lane
	} else if err != nil {
		return fmt.Errorf("task %s: read its session: %w", t.ID, err)
	}
	t.Model, t.NumTurns = info.Model, info.NumTurns
	return nil
}
