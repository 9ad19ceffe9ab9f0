package stop

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Runs is the spawn core as stopping needs it (subagent.Service).
type Runs interface {
	// InTreeOf refuses an id that names a run of another tree than
	// root's.
	InTreeOf(ctx context.Context, root, id string) error
	// LiveRuns are the runs of tree root going on in this process.
	LiveRuns(root string) []*runs.Live
	// Stop stops task id, wherever it runs (TaskStop).
	Stop(ctx context.Context, id string) (string, error)
	// Unfinished are the task records of tree root still pending or
	// running, wherever they run.
	Unfinished(ctx context.Context, root string) ([]task.Task, error)
}

// Tree stops run id of the tree root and every run it started,
// transitively (OpenClaw's stop cascades to descendants): a background
// grandchild outlives its parent's run otherwise, since runs live as long
// as their group. It returns the ids it stopped, id first, once they have
// ended. A run in another process is asked to stop through its record.
func Tree(ctx context.Context, r Runs, root, id string) ([]string, error) {
	if err := task.ValidateID(id); err != nil {
		return nil, fmt.Errorf("invalid subagent id: %w", err)
	}
	if err := r.InTreeOf(ctx, root, id); err != nil {
		return nil, err
	}
	children := map[string][]*runs.Live{}
	var self *runs.Live
	for _, t := range r.LiveRuns(root) {
		children[t.ParentSessionID] = append(children[t.ParentSessionID], t)
		if t.ID == id {
			self = t
		}
	}
	var stop []*runs.Live
	var walk func(string)
	walk = func(parent string) {
		for _, t := range children[parent] {
			stop = append(stop, t)
			walk(t.ID)
		}
	}
	walk(id)
	stopped := []string{}
	if self == nil {
		// Not running here: in another process, or not running at all.
		if _, err := r.Stop(ctx, id); err != nil {
			if len(stop) == 0 {
				return nil, err
			}
		} else {
			stopped = append(stopped, id)
		}
	} else {
		stop = append([]*runs.Live{self}, stop...)
	}
	for _, t := range stop {
		t.Cancel(runs.ErrStopped)
	}
	return awaitEnded(ctx, stop, stopped)
}

// awaitEnded waits for each of live to end and returns stopped with their
// ids added, or, when ctx ends first, the ids of those that ended before.
func awaitEnded(ctx context.Context, live []*runs.Live, stopped []string) ([]string, error) {
	for _, t := range live {
		select {
		case <-t.Done():
		case <-ctx.Done():
			return stopped, context.Cause(ctx)
		}
		stopped = append(stopped, t.ID)
	}
	return stopped, nil
}

// All stops every run of the tree root going on in this process
// (OpenClaw's /stop and "/subagents stop all"), and asks the process
// running any other unfinished task of the tree to stop it. It returns the
// ids it stopped once they have ended.
func All(ctx context.Context, r Runs, root string) ([]string, error) {
	live := r.LiveRuns(root)
	here := map[string]bool{}
	for _, t := range live {
		here[t.ID] = true
		t.Cancel(runs.ErrStopped)
	}
	stopped := []string{}
	var errs []error
	recs, err := r.Unfinished(ctx, root)
	if err != nil {
		errs = append(errs, err)
	}
	for _, rec := range recs {
		if here[rec.ID] {
			continue
		}
		if _, err := r.Stop(ctx, rec.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		stopped = append(stopped, rec.ID)
	}
	stopped, err = awaitEnded(ctx, live, stopped)
	if err != nil {
		return stopped, err
	}
	return stopped, errors.Join(errs...)
}
