package claude

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/agentresult"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The claude profile's Agent tool (alias Task, S-A1).

func (s *profile) agentTool(c subagent.Caller) tool.Tool {
	type row struct{ Name, Description, Tools string }
	var rows []row
	for _, d := range s.svc.Listed(c) {
		rows = append(rows, row{d.Name, prompt.OneLine(d.Description), toolsLabel(d)})
	}
	t := subagent.CallerTool(s.svc, tool.Info{
		Name: "Agent", Aliases: []string{"Task"}, InputSchema: schema("agent"),
		Description:     prompt.Render(agentToolTmpl(), map[string]any{"Agents": rows, "Fork": s.svc.Config().Fork && !c.Fork}),
		Access:          tool.AccessAgent,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in AgentInput) (tool.Result, error) {
		return s.runAgent(ctx, c, env, in)
	})
	t.TargetOf = func(_ tool.Env, in AgentInput) string {
		switch {
		case in.SubagentType != "":
			return in.SubagentType
		case s.svc.Config().Fork && in.SessionID == "":
			return "fork"
		}
		return "general-purpose"
	}
	return t
}

// runAgent is the Agent tool's call: a fork, or a child of the caller.
func (s *profile) runAgent(ctx context.Context, c subagent.Caller, env tool.Env, in AgentInput) (tool.Result, error) {
	if err := in.refusals(); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if fork, err := s.svc.Forking(c, in.SubagentType, in.SessionID, env.Turn); err != nil {
		return tool.Errorf("%v", err), nil
	} else if fork {
		return s.fork(ctx, c, env, in)
	}
	if err := subagent.ForkRefusal(c, env.Turn); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if in.Name != "" {
		if err := s.nameFree(ctx, c, in.Name); err != nil {
			return tool.Errorf("%v", err), nil
		}
	}
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: in.Description, Prompt: in.Prompt,
		SubagentType: in.SubagentType, Model: in.Model, Cwd: in.Cwd, SessionID: in.SessionID,
		Name: in.Name, Background: in.RunInBackground, Timeout: in.TimeoutSeconds, Isolation: in.Isolation,
	})
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if out.Launched() {
		return launchedResult(out), nil
	}
	return agentresult.Of(out, in.Prompt)
}

// fork starts a fork of the caller for this call (S-F1), always in the
// background.
func (s *profile) fork(ctx context.Context, c subagent.Caller, env tool.Env, in AgentInput) (tool.Result, error) {
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: in.Description, Prompt: in.Prompt,
		Name: in.Name, Background: true, Fork: env.Turn, Isolation: in.Isolation,
	})
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	return launchedResult(out), nil
}

// launchedResult tells the model a run goes on in the background
// (async_launched, S-L5).
func launchedResult(o *subagent.Outcome) tool.Result {
	t := o.Run().About()
	return tool.Result{
		Content: []llm.Block{llm.Text(prompt.Render(launchedTmpl(), map[string]any{"ID": t.ID, "Name": t.Name, "OutputFile": t.OutputFile, "Queued": t.Queued}))},
		Meta: map[string]any{
			"status": "async_launched", "isAsync": true, "agentId": t.ID, "description": t.Description,
			"prompt": t.Prompt, "outputFile": t.OutputFile, "canReadOutputFile": t.OutputFile != "",
		},
	}
}

// nameFree checks that no unfinished agent of this run tree has the name.
func (s *profile) nameFree(ctx context.Context, c subagent.Caller, name string) error {
	recs, err := s.svc.Config().Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
	if err != nil {
		return err
	}
	for _, t := range recs {
		if strings.EqualFold(t.Name, name) {
			return fmt.Errorf("the name %q is taken by agent %s, which is still running; pick another name or message it with SendMessage", name, t.ID)
		}
	}
	return nil
}

func toolsLabel(d agent.Definition) string {
	var parts []string
	switch {
	case d.Tools == nil || slices.Contains(d.Tools, "*"):
		parts = append(parts, "*")
	case len(d.Tools) == 0:
		// An empty, non-nil list gives the agent no tools (see pool).
		parts = append(parts, "none")
	default:
		parts = append(parts, strings.Join(d.Tools, ", "))
	}
	if len(d.DisallowedTools) > 0 {
		parts = append(parts, "except "+strings.Join(d.DisallowedTools, ", "))
	}
	return strings.Join(parts, " ")
}
