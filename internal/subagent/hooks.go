package subagent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/runner"
)

// hooks are a child's hooks: the runtime's, then its definition's own
// (which run for its session only). Inputs name the main session and its
// transcript, with the child's agent id and type, as Claude Code's do.
func (s *Service) hooks(ctx context.Context, r *run, agentID string) *runner.Hooks {
	e := s.cfg.Hooks
	if own := s.ownHooks(ctx, r.def); len(own) > 0 {
		var err error
		if e, err = e.With(own); err != nil {
			s.log.WarnContext(ctx, "the agent's hooks do not run", "agent", r.def.Name, "err", err)
			e = s.cfg.Hooks
		}
	}
	if e == nil {
		return nil
	}
	return &runner.Hooks{
		Engine: e,
		Base: hook.Input{
			SessionID: r.c.RootSessionID, TranscriptPath: r.c.RootTranscriptPath, Cwd: r.child.cwd,
			PermissionMode: string(r.child.caller.Mode), AgentID: agentID, AgentType: r.def.Name,
		},
		AgentTranscriptPath: r.sess.Info.TranscriptPath,
	}
}

// ownHooks are the hooks of def's own file that may run: none with
// disableAllHooks, and a project's only with enableProjectHooks.
func (s *Service) ownHooks(ctx context.Context, def agent.Definition) hook.Config {
	if def.Hooks == nil || s.cfg.DisableAllHooks {
		return nil
	}
	if !s.cfg.ProjectHooks && !personal(def) {
		s.log.WarnContext(ctx, "the agent file's hooks did not run: they are the project's, which runs them only once trusted (cadre trust)", "agent", def.Name, "path", def.Path)
		return nil
	}
	own, err := DefinitionHooks(def)
	if err != nil {
		s.log.WarnContext(ctx, "the agent's hooks do not run", "agent", def.Name, "err", err)
		return nil
	}
	return own
}

// personal reports whether a definition is the user's own (their agent
// files, built-ins, code), whose hooks run without the project's approval.
func personal(def agent.Definition) bool {
	switch def.Source {
	case agent.SourceUser, agent.SourceBuiltin, agent.SourceSDK:
		return true
	}
	return false
}

// DefinitionHooks is the engine configuration of a definition's hooks
// field. As in Claude Code, a Stop hook in an agent file fires when that
// agent stops: on SubagentStop.
func DefinitionHooks(def agent.Definition) (hook.Config, error) {
	if def.Hooks == nil {
		return nil, nil
	}
	raw, err := json.Marshal(def.Hooks)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	set, err := hook.ParseSettings(raw)
	if err != nil {
		return nil, err
	}
	if stop, ok := set[string(hook.Stop)]; ok {
		delete(set, string(hook.Stop))
		set[string(hook.SubagentStop)] = append(set[string(hook.SubagentStop)], stop...)
	}
	c, _, err := set.Config(def.Path+": hooks", "")
	return c, err
}

// subagentStart runs the SubagentStart hooks; it returns the context they
// add to the child's first message.
func (s *Service) subagentStart(ctx context.Context, h *runner.Hooks) string {
	if !h.Has(hook.SubagentStart) {
		return ""
	}
	return h.Fire(ctx, hook.Input{HookEventName: hook.SubagentStart, AgentID: h.Base.AgentID, AgentType: h.Base.AgentType}).Context
}
