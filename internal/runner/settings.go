package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Agent is what an agent's loop settings are made from. The main agent's
// (the root package) and every child's (package subagent) go through
// LoopConfig, so that both get the same compaction and limits, and, through
// SystemPrompt, the same system prompt shape.
type Agent struct {
	// Name is "main" or the agent type: it names the agent's model
	// requests, its compaction's among them.
	Name  string
	Model llm.Model
	// ModelID is the model's id without its provider
	// (provider.Ref.Model): compaction sizes its window for it.
	ModelID string
	// System is the whole system prompt (see SystemPrompt).
	System string
	Tools  *tool.Set
	Permit loop.Permitter
	Env    tool.Env
	// MaxTurns (0: no limit) and MaxToolInputBytes (0: the loop's
	// default) are the agent's limits.
	MaxTurns          int
	MaxToolInputBytes int64
	// Compaction compacts the agent's context as it nears the model's
	// window (nil: never); Spent, if set, receives the usage of each
	// summary call, so that it counts in the run's totals.
	Compaction *compact.Config
	Spent      func(llm.Usage)
	// SystemContext and Inbox are the loop's (see loop.Config).
	SystemContext func(context.Context) string
	Inbox         func() []llm.Message
	// Preamble is the loop's (see loop.Config): the context files.
	Preamble []llm.Block
	// Logger receives the loop's warnings (a failed compaction); nil
	// discards them.
	Logger *slog.Logger
	// Hooks are the session's hooks: the loop asks PreToolUse and
	// PostToolUse around tool calls, compaction asks PreCompact.
	Hooks *Hooks
	// Thinking is the agent's extended thinking (nil: off); OnEnd is the
	// loop's (see loop.Config).
	Thinking *llm.Thinking
	OnEnd    func() *llm.Message
	// Tracer makes the spans of the agent's model and tool calls (the
	// zero Tracer: none). The run's own span is its owner's: the main
	// conversation's turn, the subagent service's run.
	Tracer telemetry.Tracer
}

// LoopConfig is the loop's configuration for agent a.
func LoopConfig(a Agent) loop.Config {
	cfg := loop.Config{
		Model: a.Model, System: a.System, Tools: a.Tools, Permit: a.Permit, Env: a.Env, Agent: a.Name,
		MaxTurns: a.MaxTurns, MaxToolInputBytes: a.MaxToolInputBytes,
		SystemContext: a.SystemContext, Inbox: a.Inbox, Logger: a.Logger, Preamble: a.Preamble,
		Hooks: toolHooks(a.Hooks), Thinking: a.Thinking, OnEnd: a.OnEnd, Tracer: a.Tracer,
	}
	if a.Compaction != nil {
		var specs []llm.ToolSpec
		if a.Tools != nil {
			specs = a.Tools.Specs()
		}
		hooks := a.Hooks
		cfg.Compact = compactor(a.Compaction.ForModel(a.ModelID), a.Model, a.System, specs, a.Name, a.Spent,
			func(ctx context.Context) error { return preCompact(ctx, hooks) })
	}
	return cfg
}

// SystemPrompt is an agent's system prompt: its own prompt, the <env> block
// that says where and when it works (working directory, whether that is a
// git repository, platform, date), then closing — the user's
// --append-system-prompt for the main agent, which stays last as the user
// expects; a child's note on its role.
func SystemPrompt(prompt, cwd string, now time.Time, closing string) string {
	var b strings.Builder
	if p := strings.TrimSpace(prompt); p != "" {
		b.WriteString(p + "\n\n")
	}
	git := "no"
	if _, err := os.Stat(filepath.Join(cwd, ".git")); err == nil {
		git = "yes"
	}
	fmt.Fprintf(&b, "<env>\nWorking directory: %s\nIs directory a git repo: %s\nPlatform: %s\nToday's date: %s\n</env>",
		cwd, git, runtime.GOOS, now.Format("2006-01-02"))
	if c := strings.TrimSpace(closing); c != "" {
		b.WriteString("\n\n" + c)
	}
	return b.String()
}
