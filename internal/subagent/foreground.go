package subagent

import (
	"context"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// waitForeground waits for a foreground run (S-L1, S-L2): until it ends,
// until the caller's turn is cancelled (the child is cancelled with it,
// S-L3), or until it is moved to the background — by its timeout_seconds
// deadline or by a request (SDK, later Ctrl+B) — in which case it goes on
// and launched is true.
func (s *Service) waitForeground(ctx context.Context, t *liveTask, timeout time.Duration, mayBackground bool) (launched bool) {
	tool.Yield(ctx) // the child runs: the caller's other calls go on meanwhile
	var deadline <-chan time.Time
	bg := t.BackgroundRequested()
	if !mayBackground {
		bg = nil // a nil channel never fires
	}
	if timeout > 0 && mayBackground {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	select {
	case <-t.Done():
		return false
	case <-ctx.Done():
		t.Cancel(context.Cause(ctx))
		<-t.Done()
		return false
	case <-deadline:
	case <-bg:
	}
	if s.toBackground(ctx, t) {
		return true
	}
	// It finished while we decided; its result is ready.
	<-t.Done()
	return false
}

// toBackground turns a foreground run into a background task, unless it
// has already ended: from then on it is what a run started in the
// background is — recorded, watched for stop requests from other processes
// and heartbeating, and counted in the lane. The record is written under
// the run's lock, so the run cannot finish between the decision and the
// record.
func (s *Service) toBackground(ctx context.Context, t *liveTask) bool {
	ok, err := t.ToBackground(func() error {
		if err := s.record(ctx, t, task.StatusRunning, nil); err != nil {
			return err
		}
		s.events.Started(t.Info, true) // listed since it started
		t.mu.Lock()
		t.slot = s.lane.Join()
		t.mu.Unlock()
		// The run's goroutine is in the group until it ends, after this.
		// The heartbeat outlives the wait that moved the run.
		hctx := context.WithoutCancel(ctx)
		t.Group().Go(func() { s.heartbeat(hctx, t) })
		return nil
	})
	if err != nil {
		s.log.WarnContext(ctx, "move a run to the background; it stays in the foreground", "task_id", t.ID, "err", err)
		return false
	}
	return ok
}
