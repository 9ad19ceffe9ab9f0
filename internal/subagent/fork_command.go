package subagent

import (
	"context"
	"strings"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
)

// CommandRun is a slash command whose frontmatter says `context: fork`
// (S-F2): it runs in a forked child that continues the caller's
// conversation, with the command's allowed-tools as its whole tool pool.
type CommandRun struct {
	Name   string // the command, without "/"
	Prompt string // the expanded body
	// Agent runs the fork as this subagent type; "" is general-purpose.
	Agent string
	Model string
	// AllowedTools restricts the child's pool to these tools (and allows
	// the calls they describe, "Bash(git diff:*)"); nil leaves the pool
	// as the agent's.
	AllowedTools []string
	// NoGrant keeps AllowedTools from allowing anything: an untrusted
	// project's command restricts the pool, never widens the rules.
	NoGrant bool
	// History is the caller's conversation so far, which the child sees.
	History []llm.Message
}

// RunCommand runs a fork command synchronously and returns the child's
// result: its final text is the command's output.
func (s *Service) RunCommand(ctx context.Context, c Caller, cr CommandRun) (*runner.Result, error) {
	out, err := s.spawn(ctx, c, spawnRequest{
		ToolUseID: "command_" + strings.ReplaceAll(cr.Name, ":", "_"), Description: "/" + cr.Name, Prompt: cr.Prompt,
		SubagentType: cr.Agent, Model: cr.Model, Tools: cr.AllowedTools, ToolsGrantNothing: cr.NoGrant, History: cr.History, Foreground: true,
	})
	if err != nil {
		return nil, err
	}
	return out.res, nil
}

// RunAgent runs the named agent directly with prompt — the TUI's "@name
// text" — in the foreground, as a child of c: what the Agent tool would
// do, without a model's call. toolUseID stands for that call: the child's
// events are tagged with it.
func (s *Service) RunAgent(ctx context.Context, c Caller, name, prompt, toolUseID string) (*runner.Result, error) {
	out, err := s.spawn(ctx, c, spawnRequest{
		ToolUseID: toolUseID, Description: "@" + name, Prompt: prompt, SubagentType: name, Foreground: true,
	})
	if err != nil {
		return nil, err
	}
	return out.res, nil
}
