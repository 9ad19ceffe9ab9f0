package subagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The claude profile's Agent tool (alias Task, S-A1).

// AgentInput is the Agent tool's input (S-A1), in Claude Code's names.
type AgentInput struct {
	Description     string `json:"description" jsonschema:"A short (3-5 word) description of the task"`
	Prompt          string `json:"prompt" jsonschema:"The task for the agent to perform"`
	SubagentType    string `json:"subagent_type,omitempty" jsonschema:"The type of specialized agent to use for this task"`
	Model           string `json:"model,omitempty" jsonschema:"Optional model for this agent (an alias such as sonnet, opus, haiku, or provider:model); defaults to the agent's own"`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"Run the agent in the background: the call returns at once and you are notified when it finishes"`
	Name            string `json:"name,omitempty" jsonschema:"A name to address the agent by with SendMessage"`
	Isolation       string `json:"isolation,omitempty" jsonschema:"Isolation mode: worktree runs the agent in a temporary git worktree on its own branch (kept, and named in the result, when the agent changed something)"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"Working directory for the agent (absolute, or relative to yours); do not combine with isolation"`
	SessionID       string `json:"session_id,omitempty" jsonschema:"Continue an earlier agent: the session_id from its result's task_metadata"`
	TimeoutSeconds  *int   `json:"timeout_seconds,omitempty" jsonschema:"Wait at most this many seconds (up to 600) for the agent, then let it go on in the background; 0 starts it in the background"`
}

// refusals checks what the schema cannot: ranges, names, and the fields
// that exclude each other. A refused call is told why.
func (in AgentInput) refusals() error {
	switch {
	case in.TimeoutSeconds != nil && (*in.TimeoutSeconds < 0 || *in.TimeoutSeconds > 600):
		return fmt.Errorf("timeout_seconds must be between 0 and 600, got %d", *in.TimeoutSeconds)
	case in.Name != "" && agent.ValidateName(in.Name) != nil:
		return fmt.Errorf("invalid name %q: %v", in.Name, agent.ValidateName(in.Name))
	case in.Isolation == "worktree" && in.Cwd != "":
		return errors.New("cwd and isolation: \"worktree\" cannot be combined: a worktree agent works in its own checkout")
	case in.Isolation == "remote" && in.Cwd != "":
		return errors.New("cwd and isolation: \"remote\" cannot be combined: a remote agent works on its own server")
	case in.Isolation != "" && in.Isolation != "worktree" && in.Isolation != "remote":
		return fmt.Errorf("unknown isolation %q: want worktree or remote", in.Isolation)
	}
	return nil
}

func (s *Service) agentTool(c Caller) tool.Tool {
	type row struct{ Name, Description, Tools string }
	var rows []row
	for _, d := range s.Listed(c) {
		rows = append(rows, row{d.Name, oneLine(d.Description), toolsLabel(d)})
	}
	t := s.protos.agent.With(tool.Info{
		Name: "Agent", Aliases: []string{"Task"},
		Description:     render(agentToolTmpl(), map[string]any{"Agents": rows, "Fork": s.cfg.Fork && !c.Fork}),
		Access:          tool.AccessAgent,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in AgentInput) (tool.Result, error) {
		return s.runAgent(ctx, c, env, in)
	})
	t.TargetOf = func(_ tool.Env, in AgentInput) string {
		switch {
		case in.SubagentType != "":
			return in.SubagentType
		case s.cfg.Fork && in.SessionID == "":
			return "fork"
		}
		return "general-purpose"
	}
	return t
}

// runAgent is the Agent tool's call: a fork, or a child of the caller.
func (s *Service) runAgent(ctx context.Context, c Caller, env tool.Env, in AgentInput) (tool.Result, error) {
	if err := in.refusals(); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if fork, err := s.forking(c, in, env.Turn); err != nil {
		return tool.Errorf("%v", err), nil
	} else if fork {
		return s.fork(ctx, c, env, in)
	}
	if c.Fork || inFork(env.Turn) {
		return tool.Errorf("%v", errForkInFork), nil
	}
	if in.Name != "" {
		if err := s.nameFree(ctx, c, in.Name); err != nil {
			return tool.Errorf("%v", err), nil
		}
	}
	out, err := s.Spawn(ctx, c, SpawnRequest{
		ToolUseID: env.ToolUseID, Description: in.Description, Prompt: in.Prompt,
		SubagentType: in.SubagentType, Model: in.Model, Cwd: in.Cwd, SessionID: in.SessionID,
		Name: in.Name, Background: in.RunInBackground, Timeout: in.TimeoutSeconds, Isolation: in.Isolation,
	})
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if out.launched {
		return launchedResult(out), nil
	}
	return claudeResult(out, in.Prompt)
}

// claudeResult turns a finished child into the Agent tool's result: the
// child's final text and the continuation trailer (S-L1).
func claudeResult(o *Outcome, prompt string) (tool.Result, error) {
	res := o.res
	if cause, ok := o.task.timedOut(); ok {
		// The child's own time limit, not the caller's turn: the model
		// learns which agent ran out of time, and what it had written.
		partial := ""
		if text := strings.TrimSpace(res.Result); text != "" {
			partial = "\nIts output so far:\n" + escapeTags(text)
		}
		return tool.Errorf("Agent %q timed out: %v.%s\n(session_id: %s)", o.def.Name, cause, partial, o.sessionID), nil
	}
	if errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded) {
		if w := o.task.worktree(); w != nil && w.Kept {
			// Interrupted, but its worktree holds work: say where.
			return tool.Errorf("Interrupted: the agent was stopped.\n[worktree] %s", w.Summary), nil
		}
		// The parent turn was cancelled: the loop reports it as interrupted.
		return tool.Result{}, res.Err
	}
	text := strings.TrimSpace(res.Result)
	var note string
	switch {
	case res.Err != nil && text == "":
		return tool.Errorf("Agent %q failed: %v\n(session_id: %s)", o.def.Name, res.Err, o.sessionID), nil
	case res.Err != nil:
		note = fmt.Sprintf("\n\n(The agent stopped before finishing: %v. Its output so far is above.)", res.Err)
	case res.Subtype == loop.SubtypeMaxTurns:
		note = fmt.Sprintf("\n\n(The agent reached its turn limit (%d) before finishing. Its output so far is above.)", res.Turns)
	}
	for _, w := range o.warnings {
		note += "\n(Note: " + w + ")"
	}
	if text == "" {
		text = "(The agent finished without a final message.)"
	}
	total := res.Usage.Total()
	// The child's text is framed and escaped: it must not forge the
	// trailer below, nor any tag of the parent's context (frame.go).
	body := fmt.Sprintf("%s\n\n%s%s\n\n<task_metadata>session_id: %s</task_metadata>\n<usage>agentId: %s\ntotal_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		untrustedNote, escapeTags(text), note, o.sessionID, o.sessionID, total, res.ToolUses, res.Duration.Milliseconds())
	meta := map[string]any{
		"status": "completed", "agentId": o.sessionID, "sessionId": o.sessionID, "agentType": o.def.Name,
		"prompt": prompt, "content": []llm.Block{llm.Text(text)},
		"totalDurationMs": res.Duration.Milliseconds(), "totalTokens": total, "totalToolUseCount": res.ToolUses,
		"usage": res.Usage, "totalCostUsd": res.Cost,
	}
	if w := o.task.worktree(); w != nil && w.Kept {
		meta["worktreePath"], meta["worktreeBranch"] = w.Path, w.Branch
	}
	return tool.Result{Content: []llm.Block{llm.Text(body)}, Meta: meta}, nil
}

// launchedResult tells the model a run goes on in the background
// (async_launched, S-L5).
func launchedResult(o *Outcome) tool.Result {
	t := o.task.about()
	return tool.Result{
		Content: []llm.Block{llm.Text(render(launchedTmpl(), map[string]any{"ID": t.ID, "Name": t.Name, "OutputFile": t.OutputFile, "Queued": t.Queued}))},
		Meta: map[string]any{
			"status": "async_launched", "isAsync": true, "agentId": t.ID, "description": t.Description,
			"prompt": t.Prompt, "outputFile": t.OutputFile, "canReadOutputFile": t.OutputFile != "",
		},
	}
}

// nameFree checks that no unfinished agent of this run tree has the name.
func (s *Service) nameFree(ctx context.Context, c Caller, name string) error {
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
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
