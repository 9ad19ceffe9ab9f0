package subagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/heartbeat"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/subagent/standin"
	"github.com/cadre-dev/cadre/internal/task"
)

// Background runs carried between nodes (store.dispatch: any;
// internal/crossnode). A node does not queue a background run for its own
// lane: it records the run pending and unowned and hands it to the
// Dispatcher; the first node with a free place, this one included, claims
// the record and runs it (RunDispatched). The launching node keeps a
// stand-in for the run in its parent's group (internal/subagent/standin).

// dispatchable reports whether r may run on another node: a plain new
// run. A fork, a continued agent or a fork command's run carries a
// conversation in this process; a worktree is a checkout on this
// machine; a remote agent is already elsewhere.
func (s *Service) dispatchable(r *run) bool {
	return s.cfg.Dispatch != nil && r.req.Fork == nil && r.req.SessionID == "" && r.req.History == nil &&
		r.req.Tools == nil && r.tree == nil && r.def.URL == ""
}

// launchElsewhere records t pending with no owner, hands it to the
// Dispatcher and starts its stand-in. The session's transcript is released
// for the node that will run it.
func (s *Service) launchElsewhere(ctx context.Context, r *run, t *liveTask) error {
	t.elsewhere = true
	if err := s.record(ctx, t, task.StatusPending, r.sess); err != nil {
		s.endSession(ctx, r.sess, session.StatusFailed)
		return err
	}
	if err := r.sess.Release(); err != nil {
		s.log.WarnContext(ctx, "release a dispatched child's transcript", "task_id", t.ID, "err", err)
	}
	r.releaseMCP()
	c := r.c
	job := crossnode.Job{
		TaskID: t.ID, ParentAgentID: c.AgentID, CallerAgent: c.Agent, CallerModel: modelName(c.Model),
		Depth: c.Depth, Mode: c.Mode, Model: r.req.Model, Cwd: r.child.cwd, Workspace: c.Workspace,
		RunTimeout: r.req.RunTimeout, Cleanup: r.req.Cleanup, Teammate: r.req.Teammate,
	}
	if c.Ref.Model != "" {
		job.CallerModel = c.Ref.String()
	}
	if err := s.cfg.Dispatch.Dispatch(context.WithoutCancel(ctx), job); err != nil {
		err = fmt.Errorf("dispatch background run %s: %w", t.ID, err)
		// The Agent call reports it: nobody is to be notified of it.
		return errors.Join(err, s.failUnstarted(ctx, t.ID, err, true))
	}
	return nil
}

// failUnstarted records that a run which never started failed, with its
// session; notified says its caller was told already (no notification).
func (s *Service) failUnstarted(ctx context.Context, id string, cause error, notified bool) error {
	return crossnode.FailUnstarted(ctx, s.cfg.Tasks, s.cfg.Index, id, cause, notified, s.cfg.Now())
}

// claimOutput points the record of a dispatched run that starts here at
// this node's output of it.
// Its start was announced where it was launched.
func (s *Service) claimOutput(ctx context.Context, t *liveTask) error {
	return s.records.PointOutput(ctx, t.ID, t.OutputFile)
}

// standin follows a run dispatched to another node (internal/subagent/standin).
func (s *Service) standin(t *liveTask) standin.Standin {
	return standin.Standin{
		Follower: crossnode.Follower{Tasks: s.cfg.Tasks, Watch: s.cfg.Watch, Interval: s.cfg.WatchInterval, Now: s.cfg.Now, Log: s.log},
		Events:   s.events, Desk: s.desk, Now: s.cfg.Now,
		Notice: func(status task.Status, text, errText string, toolUses int, res *runner.Result) *deliver.Notice {
			return s.notification(t, status, text, errText, toolUses, res)
		},
	}
}

// figures are what a dispatched run's record shows of it while it runs.
func (t *liveTask) figures() heartbeat.Figures {
	text, _, toolUses, _ := t.Snapshot()
	return heartbeat.Figures{ToolUses: toolUses, Text: text}
}

// RunDispatched runs a child that another node dispatched, on this node,
// and returns when it has ended: the job queue's worker calls it. It
// returns crossnode.ErrNoPlace at once when this node's lane is full or
// the service is closing, and nil without running anything when the run
// was claimed, stopped or ended already (a job delivered twice runs once).
func (s *Service) RunDispatched(ctx context.Context, job crossnode.Job) error {
	if err := job.Validate(MaxDepth); err != nil {
		return err
	}
	if s.closed.Load() || !s.lane.TryAcquire() {
		return crossnode.ErrNoPlace
	}
	held := true
	defer func() {
		if held {
			s.lane.Release()
		}
	}()
	rec, ok, err := crossnode.Claim(ctx, s.cfg.Tasks, job.TaskID, s.cfg.Owner, s.cfg.Now())
	if err != nil || !ok {
		return err
	}
	c := Caller{
		RootSessionID: rec.RootSessionID, SessionID: rec.ParentSessionID, Agent: job.CallerAgent,
		Depth: job.Depth, Mode: job.Mode, Cwd: job.Cwd, Workspace: job.Workspace,
		AgentID: job.ParentAgentID, Group: s.orphans,
	}
	if c.Model, c.Ref, err = crossnode.CallerModel(s.cfg.Resolve, job.CallerModel); err != nil {
		return s.notStarted(ctx, job, err)
	}
	req := SpawnRequest{
		ToolUseID: rec.ToolUseID, Description: rec.Description, Prompt: rec.Prompt, SubagentType: rec.Agent,
		Model: job.Model, Cwd: job.Cwd, SessionID: rec.ID, Name: rec.Name, Background: true,
		RunTimeout: job.RunTimeout, Cleanup: job.Cleanup, Teammate: job.Teammate, dispatched: true,
	}
	r, err := s.begin(ctx, c, req)
	if err == nil {
		var lt *liveTask
		r.laneHeld, held = true, false
		if lt, err = s.launch(ctx, r, true); err == nil {
			select {
			case <-lt.Done():
			case <-ctx.Done():
				// The job's own end (its node shutting down): the run
				// stops, and its record says so.
				lt.Cancel(runs.ErrStopped)
				<-lt.Done()
			}
			return nil
		}
		r.releaseMCP()
	}
	return s.notStarted(ctx, job, err)
}

// notStarted records that a dispatched run cannot start here; no other
// node could do better with the same records: it fails, and its
// launching node tells its parent.
func (s *Service) notStarted(ctx context.Context, job crossnode.Job, cause error) error {
	if err := s.failUnstarted(ctx, job.TaskID, cause, false); err != nil {
		s.log.WarnContext(ctx, "record that a dispatched run could not start", "task_id", job.TaskID, "err", err)
	}
	return nil
}
