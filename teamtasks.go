package cadre

import (
	"context"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
)

// TeamTask is one task of a team's shared task list (docs/agents.md,
// "Teams"): what TaskCreate made and TaskUpdate changed.
type TeamTask struct {
	ID          string `json:"id"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	ActiveForm  string `json:"active_form,omitempty"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
	// Owner is the teammate that claimed it ("main" for the lead).
	Owner     string   `json:"owner,omitempty"`
	Blocks    []string `json:"blocks"`
	BlockedBy []string `json:"blocked_by"`
	// Waiting are the tasks of BlockedBy not completed yet: while there
	// are any, nobody may claim it.
	Waiting   []string  `json:"waiting"`
	CreatedBy string    `json:"created_by,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

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
	l, err := r.app.DB.GetList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]TeamTask, 0, len(l.Items))
	for _, it := range l.Items {
		waiting := l.Blockers(it)
		if waiting == nil {
			waiting = []string{}
		}
		out = append(out, TeamTask{
			ID: it.ID, Subject: it.Subject, Description: it.Description, ActiveForm: it.ActiveForm,
			Status: string(it.Status), Owner: it.Owner, Blocks: it.Blocks, BlockedBy: it.BlockedBy, Waiting: waiting,
			CreatedBy: it.CreatedBy, Created: it.Created, Updated: it.Updated,
		})
	}
	return out, nil
}
