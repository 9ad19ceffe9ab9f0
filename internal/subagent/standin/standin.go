package standin

import (
	"context"
	"errors"
	"time"

	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Standin follows dispatched runs for one service.
type Standin struct {
	Follower crossnode.Follower
	Events   notify.Publisher
	Desk     *deliver.Desk
	Now      func() time.Time
	// Notice is the notification of run t's end as its record holds it.
	Notice func(status task.Status, text, errText string, toolUses int, res *runner.Result) *deliver.Notice
}

// Await follows the dispatched run t (d is t as its delivery sees it)
// until its record ends — asking for a stop when ctx, its group's, ends —
// and then delivers that end and retires t.
func (s Standin) Await(ctx context.Context, t *runs.Live, d deliver.Run) {
	rec := s.Follower.Follow(ctx, t.ID, func(rec task.Task) {
		// The record's figures into the stand-in; progress when the
		// tool uses moved.
		if t.SetFigures(rec.Result, rec.ToolUses) {
			s.Events.Progress(t)
		}
	})
	s.finish(context.WithoutCancel(ctx), t, d, rec)
}

// finish ends the stand-in with the end its record holds, and delivers it.
func (s Standin) finish(ctx context.Context, t *runs.Live, d deliver.Run, rec task.Task) {
	out := &loop.Outcome{Result: rec.Result, Usage: rec.Usage, ToolUses: rec.ToolUses}
	if rec.Error != "" {
		out.Subtype, out.Err = loop.SubtypeExecution, errors.New(rec.Error)
	}
	res := &runner.Result{Outcome: out, Cost: rec.CostUSD}
	if !rec.Started.IsZero() && !rec.Finished.IsZero() {
		res.Duration = rec.Finished.Sub(rec.Started)
	}
	t.SetFigures(rec.Result, rec.ToolUses)
	t.Finish(res, rec.Status, nil, s.Now(), "")
	s.Desk.Notify(ctx, d, s.Notice(rec.Status, rec.Result, rec.Error, rec.ToolUses, res))
	t.Retire()
}
