package app

import (
	"context"

	"github.com/cadre-dev/cadre/record"
)

// TeamTasks is the task list of the team sessionID leads, as the SDK shows
// it: each task with the blockers it still waits for.
func (a *App) TeamTasks(ctx context.Context, sessionID string) ([]record.TeamTask, error) {
	l, err := a.DB.GetList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]record.TeamTask, 0, len(l.Items))
	for _, it := range l.Items {
		waiting := l.Blockers(it)
		if waiting == nil {
			waiting = []string{}
		}
		out = append(out, record.TeamTask{
			ID: it.ID, Subject: it.Subject, Description: it.Description, ActiveForm: it.ActiveForm,
			Status: string(it.Status), Owner: it.Owner, Blocks: it.Blocks, BlockedBy: it.BlockedBy, Waiting: waiting,
			CreatedBy: it.CreatedBy, Created: it.Created, Updated: it.Updated,
		})
	}
	return out, nil
}
