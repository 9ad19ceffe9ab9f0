package subagent

import (
	"context"

	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/childsetup"
)

// setup gives a child what it starts with beside its place, model, rules
// and tools: hooks, first message, memory (internal/subagent/childsetup).
func (s *Service) setup() childsetup.Setup {
	return childsetup.Setup{
		Hooks: s.cfg.Hooks, ProjectHooks: s.cfg.ProjectHooks, DisableAllHooks: s.cfg.DisableAllHooks,
		Commands: s.cfg.Commands, MainCwd: s.cfg.MainCwd, Log: s.log,
	}
}

// hooks are a child's hooks (childsetup.Setup.RunHooks). Inputs name the
// main session and its transcript, with the child's agent id and type, as
// Claude Code's do.
func (s *Service) hooks(ctx context.Context, r *run, agentID string) *runner.Hooks {
	return s.setup().RunHooks(ctx, r.def, hook.Input{
		SessionID: r.c.RootSessionID, TranscriptPath: r.c.RootTranscriptPath, Cwd: r.child.cwd,
		PermissionMode: string(r.child.caller.Mode), AgentID: agentID, AgentType: r.def.Name,
	}, r.sess.Info.TranscriptPath)
}
