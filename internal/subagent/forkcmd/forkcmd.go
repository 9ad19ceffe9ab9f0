package forkcmd

import (
	"context"
	"strings"

	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/fork"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/agentresult"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// CommandRun is a slash command whose frontmatter says `context: fork`
// (S-F2). Without agent and model it runs as a true fork of the caller:
// the request its next turn would send (Turn), so the fork's requests
// share the caller's prefix and its prompt cache. With either it runs as
// that agent (or general-purpose) handed the conversation (History).
type CommandRun struct {
	Name   string // the command, without "/"
	Prompt string // the expanded body
	// Agent runs the command as this subagent type; "" is a fork (or
	// general-purpose when Model is set).
	Agent string
	Model string
	// AllowedTools restricts the child's tools to these (and allows the
	// calls they describe, "Bash(git diff:*)"); nil leaves them as they
	// are. A fork is still shown the caller's every tool, for the shared
	// prefix, and the others refuse to run.
	AllowedTools []string
	// NoGrant keeps AllowedTools from allowing anything: an untrusted
	// project's command restricts the pool, never widens the rules.
	NoGrant bool
	// Turn is the caller's next request, before the command: system
	// prompt, tools, settings and conversation. A fork continues it.
	Turn *tool.Turn
	// History is the caller's conversation so far, which an agent run
	// sees.
	History []llm.Message
	// Background starts the run in the background: RunCommand returns at
	// once and its result comes as a task notification.
	Background bool
}

// CommandOutcome is a command's run: finished (Result), or launched in
// the background (Launched, with the agent id to follow it by).
type CommandOutcome struct {
	Result   *runner.Result
	Launched bool
	AgentID  string
}

// Spawner starts children: the spawn core (subagent.Service.Spawn).
type Spawner interface {
	Spawn(ctx context.Context, c subagent.Caller, req subagent.SpawnRequest) (*subagent.Outcome, error)
}

// Run runs a fork command: in the foreground its result's final text is
// the command's output; in the background it returns once the run has
// started.
func Run(ctx context.Context, s Spawner, c subagent.Caller, cr CommandRun) (*CommandOutcome, error) {
	req := subagent.SpawnRequest{
		ToolUseID: "command_" + strings.ReplaceAll(cr.Name, ":", "_"), Description: "/" + cr.Name, Prompt: cr.Prompt,
		SubagentType: cr.Agent, Model: cr.Model, Tools: cr.AllowedTools, ToolsGrantNothing: cr.NoGrant,
		Foreground: !cr.Background, Background: cr.Background,
	}
	if cr.Agent == "" && cr.Model == "" && cr.Turn != nil {
		if c.Fork {
			return nil, fork.ErrInFork
		}
		req.Fork = cr.Turn
	} else {
		req.History = cr.History
	}
	out, err := s.Spawn(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return &CommandOutcome{Result: out.Result(), Launched: out.Launched(), AgentID: out.SessionID()}, nil
}

// SkillFork is the Skill tool's way to run a `context: fork` skill the
// model of c invoked (S-F2): a fork continuing the very turn that called
// Skill, in the foreground, whose final text is the tool's result.
func SkillFork(s Spawner, c subagent.Caller) func(ctx context.Context, env tool.Env, cmd command.Command, prompt string) (tool.Result, error) {
	return func(ctx context.Context, env tool.Env, cmd command.Command, prompt string) (tool.Result, error) {
		if c.Fork || fork.InFork(env.Turn) {
			return tool.Errorf("%v", fork.ErrInFork), nil
		}
		if env.Turn == nil || env.Turn.Request == nil {
			return tool.Errorf("cannot fork the skill %s: the call did not come from a model turn", cmd.Name), nil
		}
		out, err := s.Spawn(ctx, c, subagent.SpawnRequest{
			ToolUseID: env.ToolUseID, Description: "/" + cmd.Name, Prompt: prompt,
			Tools: cmd.AllowedTools, ToolsGrantNothing: cmd.NoGrant, Fork: env.Turn, Foreground: true,
		})
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		return agentresult.Of(out, prompt)
	}
}

// RunAgent runs the named agent directly with prompt — the TUI's "@name
// text" — in the foreground, as a child of c: what the Agent tool would
// do, without a model's call. toolUseID stands for that call: the child's
// events are tagged with it.
func RunAgent(ctx context.Context, s Spawner, c subagent.Caller, name, prompt, toolUseID string) (*runner.Result, error) {
	out, err := s.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: toolUseID, Description: "@" + name, Prompt: prompt, SubagentType: name, Foreground: true,
	})
	if err != nil {
		return nil, err
	}
	return out.Result(), nil
}
