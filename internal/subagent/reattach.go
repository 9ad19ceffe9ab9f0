package subagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/remote"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
)

// errReattached aborts the claim of a record that changed since it was
// listed: someone else took it, or it ended.
var errReattached = errors.New("task changed since it was listed")

// Reattach picks up, in c's group, the background remote runs that the main
// agent of c's session started in a cadre process that has ended (gone
// says, by owner id): their remote task goes on on its server, and its id
// is on the record (remoteTask), so this process claims the record and
// subscribes to the task again; its end is recorded and notified to c as
// any background run's is (S-W2). A run the server never named a task for
// is failed by the start-up recovery (task.Sweep) instead.
//
// The runtime calls it when it opens a conversation on an existing
// session: that is where the notification has an agent to reach. It
// returns the ids of the runs it reattached; an error for one run does
// not stop the others.
func (s *Service) Reattach(ctx context.Context, c Caller, gone func(owner string) bool) ([]string, error) {
	if c.Group == nil {
		return nil, errors.New("reattach remote runs: the caller has no group")
	}
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{
		RootSessionID: c.RootSessionID, ParentSessionID: c.SessionID,
		Statuses: []task.Status{task.StatusPending, task.StatusRunning},
	})
	if err != nil {
		return nil, fmt.Errorf("reattach remote runs: %w", err)
	}
	var (
		ids  []string
		errs []error
	)
	for _, listed := range recs {
		if listed.Kind != task.KindRemoteAgent || listed.RemoteTaskID == "" || s.live(listed.ID) != nil || !gone(listed.Owner) {
			continue
		}
		def, ok := s.cfg.Agents.Get(listed.Agent)
		if !ok || def.URL == "" {
			errs = append(errs, s.failReattach(ctx, listed, fmt.Sprintf("its process ended, and the remote agent %q is no longer defined (with a url) here, so its task %s could not be followed again", listed.Agent, listed.RemoteTaskID)))
			continue
		}
		ra, err := remote.New(remote.Config{Name: def.Name, URL: def.URL, Headers: def.Headers, Ask: s.remoteAsk(c, def.Name)})
		if err != nil {
			errs = append(errs, s.failReattach(ctx, listed, err.Error()))
			continue
		}
		now := s.cfg.Now()
		rec, err := s.cfg.Tasks.UpdateTask(ctx, listed.ID, func(t *task.Task) error {
			if t.Status.Terminal() || t.Owner != listed.Owner || !t.Heartbeat.Equal(listed.Heartbeat) || !gone(t.Owner) {
				return errReattached
			}
			t.Owner, t.Heartbeat, t.Status = s.cfg.Owner, now, task.StatusRunning
			if t.Started.IsZero() {
				t.Started = now
			}
			return nil
		})
		if errors.Is(err, errReattached) {
			ra.Close()
			continue
		}
		if err != nil {
			ra.Close()
			errs = append(errs, fmt.Errorf("reattach remote run %s: %w", listed.ID, err))
			continue
		}
		s.followRemote(c, rec, ra)
		ids = append(ids, rec.ID)
	}
	return ids, errors.Join(errs...)
}

// failReattach ends the record of a remote run that cannot be followed
// again, so that it does not stay running forever.
func (s *Service) failReattach(ctx context.Context, rec task.Task, reason string) error {
	_, err := s.cfg.Tasks.UpdateTask(ctx, rec.ID, func(t *task.Task) error {
		if t.Status.Terminal() || t.Owner != rec.Owner {
			return errReattached
		}
		t.Status, t.Error, t.Finished = task.StatusFailed, reason, s.cfg.Now()
		return nil
	})
	if err != nil && !errors.Is(err, errReattached) {
		return fmt.Errorf("fail remote run %s: %w", rec.ID, err)
	}
	return nil
}

// followRemote runs the reattached run rec in c's group: it waits for the
// remote task's answer and ends as a background run launched here would
// (finish), its notification reaching c's agent.
func (s *Service) followRemote(c Caller, rec task.Task, ra *remote.Agent) {
	runCtx, cancel := context.WithCancelCause(c.Group.ctx)
	t := &liveTask{
		id: rec.ID, parentAgentID: c.AgentID, parentSessionID: rec.ParentSessionID, rootSessionID: rec.RootSessionID,
		toolUseID: rec.ToolUseID, agentCall: rec.ToolUseID, agentType: rec.Agent, kind: task.KindRemoteAgent,
		description: rec.Description, prompt: rec.Prompt, name: rec.Name, outputFile: rec.OutputFile,
		started: rec.Started, group: c.Group, cancel: cancel,
		done: make(chan struct{}), bgRequested: make(chan struct{}), background: true,
	}
	s.track(t)
	c.Group.add(t)
	c.Group.wg.Go(func() { s.heartbeat(context.WithoutCancel(runCtx), t) })
	c.Group.wg.Go(func() {
		defer cancel(nil)
		defer ra.Close()
		ra.Observe(func(line string) { s.remoteProgress(runCtx, t, line) })
		text, err := ra.Resume(runCtx, rec.RemoteTaskID)
		out := &loop.Outcome{Result: text}
		if err != nil {
			out.Subtype, out.Err = loop.SubtypeExecution, err
		}
		t.mu.Lock()
		t.text = text
		t.mu.Unlock()
		s.finish(runCtx, t, &runner.Result{Outcome: out}, context.Cause(runCtx))
	})
}
