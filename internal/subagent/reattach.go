package subagent

import (
	"context"
	"errors"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/remoteagent"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Reattach picks up, in c's group, the background remote runs that the main
// agent of c's session started in a cadre process that has ended (gone
// says, by owner id): their remote task goes on on its server, and its id
// is on the record (remoteagent.Recorder.TaskID), so this process claims
// the record (remoteagent.Reattacher) and subscribes to the task again;
// its end is recorded and notified to c as any background run's is
// (S-W2). A run the server never named a task for is failed by the
// start-up recovery (task.Sweep) instead.
//
// The runtime calls it when it opens a conversation on an existing
// session: that is where the notification has an agent to reach. It
// returns the ids of the runs it reattached; an error for one run does
// not stop the others.
func (s *Service) Reattach(ctx context.Context, c Caller, gone func(owner string) bool) ([]string, error) {
	if c.Group == nil {
		return nil, errors.New("reattach remote runs: the caller has no group")
	}
	orphans, err := remoteagent.Reattacher{
		Tasks: s.cfg.Tasks, Agents: s.cfg.Agents, Owner: s.cfg.Owner, Now: s.cfg.Now,
		Ask: func(name string) func(context.Context, string, string) (string, error) {
			return remoteagent.Ask(s.asker(c), name)
		},
	}.Claim(ctx, c.RootSessionID, c.SessionID, func(id string) bool { return s.live(id) != nil }, gone)
	var ids []string
	for _, o := range orphans {
		s.followRemote(c, o.Rec, o.Follow, o.CloseAgent)
		ids = append(ids, o.Rec.ID)
	}
	return ids, err
}

// followRemote runs the reattached run rec in c's group: it waits for the
// remote task's answer and ends as a background run launched here would
// (finish), its notification reaching c's agent.
func (s *Service) followRemote(c Caller, rec task.Task, follow func(ctx context.Context, progress func(line string)) (string, error), closeAgent func()) {
	runCtx, cancel := context.WithCancelCause(c.Group.Context())
	t := &liveTask{Live: runs.New(runs.Info{
		ID: rec.ID, ParentAgentID: c.AgentID, ParentSessionID: rec.ParentSessionID, RootSessionID: rec.RootSessionID,
		ToolUseID: rec.ToolUseID, AgentCall: rec.ToolUseID, AgentType: rec.Agent, Kind: task.KindRemoteAgent,
		Description: rec.Description, Prompt: rec.Prompt, Name: rec.Name, OutputFile: rec.OutputFile,
	}, runs.Options{Background: true, Started: rec.Started, Group: c.Group})}
	t.SetCancel(cancel)
	s.track(t)
	c.Group.Add(t.Live)
	c.Group.Go(func() { s.heartbeat(context.WithoutCancel(runCtx), t) })
	c.Group.Go(func() {
		defer cancel(nil)
		defer closeAgent()
		text, err := follow(runCtx, func(line string) { s.remoteRecorder().Progress(runCtx, t.Live, line) })
		out := &loop.Outcome{Result: text}
		if err != nil {
			out.Subtype, out.Err = loop.SubtypeExecution, err
		}
		t.SetFigures(text, 0)
		s.finish(runCtx, t, &runner.Result{Outcome: out}, context.Cause(runCtx))
	})
}
