package childsetup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/memory"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/skill"
	"github.com/cadre-dev/cadre/internal/spawnpolicy"
	"github.com/cadre-dev/cadre/llm"
)

// Setup holds what of the runtime a child's setup reads.
type Setup struct {
	// Hooks are the runtime's hooks (nil: none). A definition's own hooks
	// run unless DisableAllHooks, and a project's agent files' only when
	// ProjectHooks (they are commands the repository chose).
	Hooks                         *hook.Engine
	ProjectHooks, DisableAllHooks bool
	// Commands are the loaded commands and skills, which a definition's
	// skills field preloads.
	Commands *command.Set
	// MainCwd is the main workspace, where project memory lives.
	MainCwd string
	Log     *slog.Logger
}

// RunHooks are a child's hooks: the runtime's, then its definition's own
// (which run for its session only); nil when there are none. base is what
// every input names — the main session and its transcript, with the
// child's agent id and type, as Claude Code's do — and transcript the
// child's own.
func (s Setup) RunHooks(ctx context.Context, def agent.Definition, base hook.Input, transcript string) *runner.Hooks {
	e := s.Hooks
	if own := s.ownHooks(ctx, def); len(own) > 0 {
		var err error
		if e, err = e.With(own); err != nil {
			s.Log.WarnContext(ctx, "the agent's hooks do not run", "agent", def.Name, "err", err)
			e = s.Hooks
		}
	}
	if e == nil {
		return nil
	}
	return &runner.Hooks{Engine: e, Base: base, AgentTranscriptPath: transcript}
}

// ownHooks are the hooks of def's own file that may run
// (spawnpolicy.OwnHooks); why others do not is logged.
func (s Setup) ownHooks(ctx context.Context, def agent.Definition) hook.Config {
	own, err := spawnpolicy.OwnHooks(def, s.ProjectHooks, s.DisableAllHooks)
	switch {
	case errors.Is(err, spawnpolicy.ErrProjectHooks):
		s.Log.WarnContext(ctx, err.Error(), "agent", def.Name, "path", def.Path)
	case err != nil:
		s.Log.WarnContext(ctx, "the agent's hooks do not run", "agent", def.Name, "err", err)
	}
	return own
}

// SubagentStart runs h's SubagentStart hooks; it returns the context they
// add to the child's first message.
func SubagentStart(ctx context.Context, h *runner.Hooks) string {
	if !h.Has(hook.SubagentStart) {
		return ""
	}
	return h.Fire(ctx, hook.Input{Event: hook.SubagentStart, AgentID: h.Base.AgentID, AgentType: h.Base.AgentType}).Context
}

// FirstMessage is the child's first user message around its task prompt:
// the definition's initialPrompt first, then the prompt, then the skills
// its skills field preloads. Names that are not skills are warnings.
func (s Setup) FirstMessage(def agent.Definition, prompt string) (llm.Message, []string) {
	msg := llm.Message{Role: llm.RoleUser}
	if ip := strings.TrimSpace(def.InitialPrompt); ip != "" {
		msg.Content = append(msg.Content, llm.Text(ip))
	}
	msg.Content = append(msg.Content, llm.Text(prompt))
	if len(def.Skills) == 0 {
		return msg, nil
	}
	text, missing := skill.Preload(s.Commands, def.Skills)
	if text != "" {
		msg.Content = append(msg.Content, llm.Text(text))
	}
	var warnings []string
	for _, m := range missing {
		warnings = append(warnings, fmt.Sprintf("skill %q in the agent's skills field was not found (skills are .claude/skills/<name>/SKILL.md or .cadre/skills/<name>/SKILL.md); it was not loaded", m))
	}
	return msg, warnings
}

// MemoryPrompt is the system prompt section of def's memory, in dir, with
// home the child's home directory (user-scoped memory); a memory that
// cannot be read says so there, and the run goes on.
func (s Setup) MemoryPrompt(def agent.Definition, dir, home string) string {
	p, err := memory.Prompt(dir, memory.Root(def.Memory, s.MainCwd, home))
	if err != nil {
		s.Log.Warn("read an agent's memory", "agent", def.Name, "err", err)
		return fmt.Sprintf("# Your memory\n\nYour memory directory is %s, but it could not be read: %v", dir, err)
	}
	return p
}
