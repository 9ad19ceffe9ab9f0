package app

import (
	"cmp"
	"context"
	"slices"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/record"
	"github.com/cadre-dev/cadre/view"
)

// RunOf is a live run of a conversation's group as front ends show it.
func RunOf(r subagent.Run) view.SubagentRun {
	out := view.SubagentRun{
		ID: r.ID, Key: "agent:" + r.Agent + ":subagent:" + r.ID, ParentSessionID: r.ParentSessionID, ToolUseID: r.ToolUseID,
		Agent: r.Agent, Name: r.Name, Description: r.Description, Depth: r.Depth, Background: r.Background,
		Status: r.Status, Started: r.Started, Ended: r.Ended, Tokens: r.Tokens, ToolUses: r.ToolUses,
		Result: r.Result, Error: r.Err,
	}
	if out.Running() {
		out.CurrentTool = r.LastTool
	}
	return out
}

// StoredRuns are the child sessions of root's tree that this process did
// not start (skip, and its own runs still launching), oldest first: the
// runs of an earlier process.
func (a *App) StoredRuns(ctx context.Context, root string, skip map[string]bool) ([]view.SubagentRun, error) {
	if err := a.Settled(ctx); err != nil {
		return nil, err
	}
	recs, err := a.DB.ListTasks(ctx, task.Filter{RootSessionID: root})
	if err != nil {
		return nil, err
	}
	tasks := map[string]task.Task{}
	for _, t := range recs {
		tasks[t.ID] = t
	}
	own := a.Owner.ID()
	var out []view.SubagentRun
	var walk func(parent string, depth int) error
	walk = func(parent string, depth int) error {
		children, err := a.DB.ListSessions(ctx, session.Filter{ParentID: &parent})
		if err != nil {
			return err
		}
		for _, s := range children {
			// A running session this process owns that its group does
			// not list yet is a launch in progress (it is recorded just
			// before the group lists it), not an earlier process's run:
			// listed here first, it would take another run's number.
			launching := s.Owner == own && s.Status == session.StatusRunning
			if !skip[s.ID] && !launching {
				out = append(out, storedRun(s, tasks[s.ID], depth))
			}
			// Depth is bounded by subagents.maxSpawnDepth; a cycle in a
			// damaged index cannot make this loop.
			if depth < subagent.MaxDepth+1 {
				if err := walk(s.ID, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, 1); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y view.SubagentRun) int { return x.Started.Compare(y.Started) })
	return out, nil
}

// storedRun describes a child session from its records: its task record's
// when it ran in the background (rec.ID set), else the session's own.
func storedRun(s session.Info, rec task.Task, depth int) view.SubagentRun {
	run := view.SubagentRun{
		ID: s.ID, Key: cmp.Or(s.Key, "agent:"+s.Agent+":subagent:"+s.ID), ParentSessionID: s.ParentID, Agent: s.Agent,
		Description: s.Title, Depth: depth, Started: s.Created, Tokens: s.Usage.Total(),
	}
	switch s.Status {
	case session.StatusRunning:
		run.Status = record.TaskRunning
	case session.StatusFailed:
		run.Status = record.TaskFailed
	case session.StatusKilled:
		run.Status = record.TaskKilled
	default:
		run.Status = record.TaskCompleted
	}
	if run.Status.Terminal() {
		run.Ended = s.Updated
	}
	if rec.ID != "" {
		run.Background, run.Name, run.Description, run.ToolUseID = true, rec.Name, rec.Description, rec.ToolUseID
		run.Status, run.Result, run.Error, run.ToolUses = rec.Status, rec.Result, rec.Error, rec.ToolUses
		run.Started = cmp.Or(rec.Started, rec.Created)
		run.Ended = rec.Finished
	}
	return run
}
