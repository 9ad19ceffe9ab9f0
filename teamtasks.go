package cadre

import (
	"context"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/record"
)

// TeamTask is one task of a team's shared task list (record.TeamTask).
type TeamTask = record.TeamTask

// TeamTasks returns the task list of the team a main session leads, in
// creation order; a session that never led a team has an empty one. The
// list lives in the store, so any process sharing it sees the same.
func (r *Runtime) TeamTasks(ctx context.Context, sessionID string) ([]TeamTask, error) {
	if err := session.ValidateID(sessionID); err != nil {
		return nil, err
	}
	if err := r.app.Settled(ctx); err != nil {
		return nil, err
	}
	return r.app.TeamTasks(ctx, sessionID)
}
