package subagent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cadre-dev/cadre/internal/builtin"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The Agent-tool fork (S-F1): with the gate on, an Agent call without
// subagent_type starts a fork — a background child that continues the
// caller's own conversation. Its first request is the caller's request as it
// was sent (rendered system prompt, history, tool definitions, model and
// thinking settings), then the caller's reply holding the call, then one
// identical placeholder result per call of that reply and the fork's
// directive. N forks of one message therefore share a byte-identical prefix
// up to the directive, which a provider's prompt cache serves: the last
// placeholder is marked as a cache breakpoint.

// forkTag marks a fork's directive; a conversation holding it is a fork's.
const forkTag = "<fork-boilerplate>"

// forkPlaceholder answers every call of the forking message in a fork's
// context. It must be the same text for every fork.
const forkPlaceholder = "Forked: this call was handed to a fork of the agent. Ignore this result."

var (
	//go:embed prompts/fork_directive.md
	forkDirectiveText string
	forkDirectiveTmpl = lazy("fork_directive", forkDirectiveText, nil)
)

// errForkInFork is the recursion guard's refusal.
var errForkInFork = errors.New("this agent is a fork, and forks cannot start agents of their own; do the work yourself")

// forkDefinition is the built-in fork agent: the parent's exact tools,
// model and prompt (so nothing of its own).
func forkDefinition() agent.Definition {
	return agent.Definition{
		Name: "fork", Description: "A fork of the calling agent, sharing its conversation.",
		Format: agent.FormatBuiltin, Source: agent.SourceBuiltin,
	}
}

// Forking reports whether an Agent call naming subagentType, and
// continuing sessionID, forks the caller, and refuses a fork inside a
// fork (ForkRefusal).
func (s *Service) Forking(c Caller, subagentType, sessionID string, turn *tool.Turn) (bool, error) {
	if !s.cfg.Fork || subagentType != "" || sessionID != "" {
		return false, nil
	}
	if err := ForkRefusal(c, turn); err != nil {
		return false, err
	}
	if turn == nil || turn.Request == nil {
		return false, errors.New("cannot fork: the call did not come from a model turn")
	}
	return true, nil
}

// ForkRefusal refuses a spawn by a fork — known by its run source (the
// caller is a fork) or, as a backstop, by the directive tag in the
// conversation the call came from: nil when c is no fork.
func ForkRefusal(c Caller, turn *tool.Turn) error {
	if c.Fork || inFork(turn) {
		return errForkInFork
	}
	return nil
}

func inFork(turn *tool.Turn) bool {
	if turn == nil || turn.Request == nil {
		return false
	}
	for _, m := range turn.Request.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockText && strings.Contains(b.Text, forkTag) {
				return true
			}
		}
	}
	return false
}

// forkHistory is what a fork starts from: the caller's request messages
// and its reply.
func forkHistory(turn *tool.Turn) []llm.Message {
	if turn.Reply.Role == "" {
		// Forked between turns (a command or skill, S-F2): the request
		// the caller's next turn would open with, and no reply yet.
		return slices.Clone(turn.Request.Messages)
	}
	return append(slices.Clone(turn.Request.Messages), turn.Reply)
}

// forkInput is the fork's first user message: the identical placeholders,
// the last one a cache breakpoint, then the directive.
func forkInput(turn *tool.Turn, prompt, worktreeDir string) llm.Message {
	var blocks []llm.Block
	for _, u := range turn.Reply.ToolUses() {
		blocks = append(blocks, llm.ToolResult(u.ID, forkPlaceholder, false))
	}
	if n := len(blocks); n > 0 {
		blocks[n-1].Cache = true
	}
	blocks = append(blocks, llm.Text(render(forkDirectiveTmpl(), map[string]any{"Prompt": strings.TrimSpace(prompt), "Worktree": worktreeDir})))
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

// forkTools is the fork's pool: the parent's exact tool definitions — the
// shared prefix needs them byte for byte — but the agent tools (Agent,
// SendMessage, TaskOutput, TaskStop, TaskList) run as the fork's own, so a
// fork never acts on the parent's tasks, and may not spawn. With only (a
// fork command's allowed-tools) the other tools are still shown, for the
// prefix, but refuse to run.
func (s *Service) forkTools(turn *tool.Turn, c Caller, only []string) (*tool.Set, error) {
	own := map[string]tool.Tool{}
	for _, t := range s.Tools(c) {
		own[t.Info().Name] = t
	}
	var tools []tool.Tool
	for _, t := range turn.Tools.Tools() {
		info := t.Info()
		switch {
		case only != nil && !named(only, info.Name, info.Aliases):
			tools = append(tools, &rebound{info: info, refusal: fmt.Sprintf("%s is not among this command's allowed-tools (%s); use one of those", info.Name, strings.Join(only, ", "))})
		case info.Name == "Bash":
			// The same Bash, its background commands the fork's own.
			tools = append(tools, builtin.BindShells(t, s.Shells(c)))
		case info.Access != tool.AccessAgent:
			tools = append(tools, t)
		default:
			tools = append(tools, &rebound{info: info, run: own[info.Name]})
		}
	}
	return tool.NewSet(tools...)
}

// rebound shows one tool's definition and runs another (or refuses).
type rebound struct {
	info tool.Info
	run  tool.Tool
	// refusal, when set, is why the tool may not run here.
	refusal string
}

func (r *rebound) Info() tool.Info { return r.info }

func (r *rebound) Call(ctx context.Context, env tool.Env, input json.RawMessage) (tool.Result, error) {
	if r.refusal != "" {
		return tool.Errorf("%s", r.refusal), nil
	}
	if r.run == nil {
		if r.info.Name == "Agent" {
			return tool.Errorf("%v", errForkInFork), nil
		}
		return tool.Errorf("%s is not available to a fork: it works on its own task and reports back", r.info.Name), nil
	}
	return r.run.Call(ctx, env, input)
}

func (r *rebound) ValidateInput(input json.RawMessage) error {
	if v, ok := r.run.(tool.Validating); ok {
		return v.ValidateInput(input)
	}
	return nil
}

func (r *rebound) Target(env tool.Env, input json.RawMessage) (string, error) {
	if t, ok := r.run.(tool.Targeted); ok {
		return t.Target(env, input)
	}
	return "", nil
}
