package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errSkip aborts a Sweep update whose task changed since it was listed.
var errSkip = errors.New("task changed since it was listed")

// Judge tells Sweep whether the process executing an unfinished task is
// gone: if so, reason is the Error to record. It is called once per task
// listed, outside the store's locks, and again inside the task's atomic
// update, with the record as stored then, so it must be quick and must not
// call the Store.
type Judge func(t Task) (reason string, gone bool)

// Sweep marks failed every pending or running task whose executor judge
// says is gone, with judge's reason as Error and Finished = now, and
// returns the tasks it changed, as stored. The caller also marks their
// child sessions failed. A remote_agent task whose remote task id is
// recorded is left alone: its work goes on on the remote server, and a
// later cadre subscribes to it again (S-W2, subagent.Service.Reattach);
// one the server never named a task for cannot be followed, and fails.
//
// It is safe to run from several processes at once: each task is re-checked
// inside its atomic update — still unfinished, same owner, its heartbeat not
// refreshed since it was listed (an executor that refreshed it is alive),
// and judged gone again — so exactly one Sweep reports it.
//
// An error updating one task does not stop the others; the errors are
// joined and returned with the tasks changed so far.
func Sweep(ctx context.Context, s Store, judge Judge, now time.Time) ([]Task, error) {
	active, err := s.ListTasks(ctx, Filter{Statuses: []Status{StatusPending, StatusRunning}})
	if err != nil {
		return nil, err
	}
	changed := []Task{}
	var errs []error
	for _, listed := range active {
		if followable(listed) {
			continue
		}
		if _, gone := judge(listed); !gone {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		// A task that ended since it was listed refuses the event
		// (ErrTransition): someone else recorded its end.
		t, err := s.Transition(ctx, listed.ID, func(t *Task) (Event, error) {
			if t.Owner != listed.Owner || followable(*t) || !t.Heartbeat.Equal(listed.Heartbeat) {
				return "", errSkip
			}
			reason, gone := judge(*t)
			if !gone {
				return "", errSkip
			}
			t.Error = reason
			t.Finished = now
			return EventOrphan, nil
		})
		switch {
		case errors.Is(err, errSkip), errors.Is(err, ErrTransition):
		case err != nil:
			errs = append(errs, err)
		default:
			changed = append(changed, t)
		}
	}
	return changed, errors.Join(errs...)
}

// followable reports whether t is a remote run that a later process can
// subscribe to again instead of failing it.
func followable(t Task) bool {
	return t.Kind == KindRemoteAgent && t.RemoteTaskID != ""
}

// Recover is Sweep with the owner locks in dir as the judge: a task's
// executor is gone when its owner does not hold its lock (see Alive).
// Every process executing tasks of s must claim its Owner in dir, i.e.
// they share one machine (and one CADRE_HOME); a store shared by several
// machines judges by node heartbeats instead (package cluster).
func Recover(ctx context.Context, s Store, dir string, now time.Time) ([]Task, error) {
	changed, err := Sweep(ctx, s, LockJudge(dir), now)
	if err != nil {
		return changed, fmt.Errorf("recover tasks: %w", err)
	}
	return changed, nil
}

// LockJudge judges a task's executor gone when its owner's lock in dir is
// free (Alive), asking once per owner: the answer is kept, so the re-check
// inside a task's update touches no file.
func LockJudge(dir string) Judge {
	alive := map[string]bool{} // owner id → Alive
	return func(t Task) (string, bool) {
		live, ok := alive[t.Owner]
		if !ok {
			live = Alive(dir, t.Owner)
			alive[t.Owner] = live
		}
		if live {
			return "", false
		}
		return orphanError(t.Owner), true
	}
}

func orphanError(owner string) string {
	if owner == "" {
		return "the cadre process that ran this task (no owner recorded) ended before it finished"
	}
	return fmt.Sprintf("the cadre process that ran this task (owner %s) ended before it finished", owner)
}
