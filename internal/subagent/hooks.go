package subagent

import (
	"context"
	"errors"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/spawnpolicy"
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

// ownHooks are the hooks of def's own file that may run
// (spawnpolicy.OwnHooks); why others do not is logged.
func (s *Service) ownHooks(ctx context.Context, def agent.Definition) hook.Config {
	own, err := spawnpolicy.OwnHooks(def, s.cfg.ProjectHooks, s.cfg.DisableAllHooks)
	switch {
	case errors.Is(err, spawnpolicy.ErrProjectHooks):
		s.log.WarnContext(ctx, err.Error(), "agent", def.Name, "path", def.Path)
	case err != nil:
		s.log.WarnContext(ctx, "the agent's hooks do not run", "agent", def.Name, "err", err)
	}
	return own
}

// subagentStart runs the SubagentStart hooks; it returns the context they
// add to the child's first message.
func (s *Service) subagentStart(ctx context.Context, h *runner.Hooks) string {
	if !h.Has(hook.SubagentStart) {
		return ""
	}
	return h.Fire(ctx, hook.Input{Event: hook.SubagentStart, AgentID: h.Base.AgentID, AgentType: h.Base.AgentType}).Context
}
