package fork

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/tmplexec"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Tag marks a fork's directive; a conversation holding it is a fork's.
const Tag = "<fork-boilerplate>"

// Placeholder answers every call of the forking message in a fork's
// context. It must be the same text for every fork.
const Placeholder = "Forked: this call was handed to a fork of the agent. Ignore this result."

//go:embed directive.md
var directiveText string

// directive is parsed on first use: a process that never forks does not
// pay for it. It runs on tmplexec (see its doc.go).
var directive = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.New("fork_directive").Parse(directiveText)), nil)
})

// ErrInFork is the recursion guard's refusal.
var ErrInFork = errors.New("this agent is a fork, and forks cannot start agents of their own; do the work yourself")

// Definition is the built-in fork agent: the parent's exact tools, model
// and prompt (so nothing of its own).
func Definition() agent.Definition {
	return agent.Definition{
		Name: "fork", Description: "A fork of the calling agent, sharing its conversation.",
		Format: agent.FormatBuiltin, Source: agent.SourceBuiltin,
	}
}

// InFork reports whether turn's conversation is a fork's: it holds the
// directive's tag. It backs up the run source, which says so first.
func InFork(turn *tool.Turn) bool {
	if turn == nil || turn.Request == nil {
		return false
	}
	for _, m := range turn.Request.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockText && strings.Contains(b.Text, Tag) {
				return true
			}
		}
	}
	return false
}

// History is what a fork starts from: the caller's request messages and
// its reply.
func History(turn *tool.Turn) []llm.Message {
	if turn.Reply.Role == "" {
		// Forked between turns (a command or skill, S-F2): the request
		// the caller's next turn would open with, and no reply yet.
		return slices.Clone(turn.Request.Messages)
	}
	return append(slices.Clone(turn.Request.Messages), turn.Reply)
}

// Input is the fork's first user message: the identical placeholders, the
// last one a cache breakpoint, then the directive with its task (prompt)
// and, when it works in a worktree of its own, its directory.
func Input(turn *tool.Turn, prompt, worktreeDir string) llm.Message {
	var blocks []llm.Block
	for _, u := range turn.Reply.ToolUses() {
		blocks = append(blocks, llm.ToolResult(u.ID, Placeholder, false))
	}
	if n := len(blocks); n > 0 {
		blocks[n-1].Cache = true
	}
	var b bytes.Buffer
	if err := directive().Execute(&b, map[string]any{"Prompt": strings.TrimSpace(prompt), "Worktree": worktreeDir}); err != nil {
		// The template is ours and its data fixed in shape: a failure is
		// a bug to surface loudly in tests.
		panic("fork: directive: " + err.Error())
	}
	blocks = append(blocks, llm.Text(strings.TrimSpace(b.String())))
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

// Rerouted shows the tool defined by info and runs run: one of the
// caller's agent tools, bound to the fork. With run nil it refuses: a fork
// may not start agents, nor act on tasks not its own.
func Rerouted(info tool.Info, run tool.Tool) tool.Tool {
	return &rebound{info: info, run: run}
}

// Refusing shows the tool defined by info and refuses to run it, saying
// why.
func Refusing(info tool.Info, why string) tool.Tool {
	return &rebound{info: info, refusal: why}
}

// NotAllowed is Refusing's reason for a tool outside a fork command's
// allowed-tools (only).
func NotAllowed(name string, only []string) string {
	return fmt.Sprintf("%s is not among this command's allowed-tools (%s); use one of those", name, strings.Join(only, ", "))
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
			return tool.Errorf("%v", ErrInFork), nil
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
