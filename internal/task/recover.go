package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errSkip aborts a Recover update whose task changed since it was listed.
var errSkip = errors.New("task changed since it was listed")

// Recover marks every pending or running task whose owner is not alive (see
// Alive) as failed, with an Error naming the owner and Finished = now, and
// returns the tasks it changed, as stored. The caller also marks their child
// sessions failed. Tasks of kind remote_agent are left alone: no local
// process owns them (S-X2).
//
// It is safe to run from several processes at once: each task is re-checked
// inside its atomic update (still unfinished, same owner), so exactly one
// Recover reports it. Recover assumes that every process executing tasks of
// s claims its Owner in dir, i.e. that they share one machine; a store
// shared by several machines needs the heartbeat sweeper instead, or a
// Recover limited to its own machine's tasks.
//
// An error updating one task does not stop the others; the errors are
// joined and returned with the tasks changed so far.
func Recover(ctx context.Context, s Store, dir string, now time.Time) ([]Task, error) {
	active, err := s.ListTasks(ctx, Filter{Statuses: []Status{StatusPending, StatusRunning}})
	if err != nil {
		return nil, fmt.Errorf("recover tasks: %w", err)
	}
	alive := make(map[string]bool) // owner id → Alive, asked once per owner
	changed := []Task{}
	var errs []error
	for _, listed := range active {
		if listed.Kind == KindRemoteAgent {
			continue
		}
		live, ok := alive[listed.Owner]
		if !ok {
			live = Alive(dir, listed.Owner)
			alive[listed.Owner] = live
		}
		if live {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		t, err := s.UpdateTask(ctx, listed.ID, func(t *Task) error {
			if t.Status.Terminal() || t.Owner != listed.Owner || t.Kind == KindRemoteAgent {
				return errSkip
			}
			t.Status = StatusFailed
			t.Error = orphanError(t.Owner)
			t.Finished = now
			return nil
		})
		switch {
		case errors.Is(err, errSkip):
		case err != nil:
			errs = append(errs, err)
		default:
			changed = append(changed, t)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return changed, fmt.Errorf("recover tasks: %w", err)
	}
	return changed, nil
}

func orphanError(owner string) string {
	if owner == "" {
		return "the cadre process that ran this task (no owner recorded) ended before it finished"
	}
	return fmt.Sprintf("the cadre process that ran this task (owner %s) ended before it finished", owner)
}
