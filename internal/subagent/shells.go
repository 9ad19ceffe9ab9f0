package subagent

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/heartbeat"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/subagent/shell"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// Background shells are internal/subagent/shell's; the core gives each
// caller its own and tracks their runs beside its agents' runs, so that
// the task tools reach them.

// Shells returns the Shells that run c's background Bash commands as its
// tasks.
func (s *Service) Shells(c Caller) builtin.Shells { return s.shells.For(s.shellOwner(c)) }

// BindShells gives the built-in Bash among tools (if there) c's Shells:
// the tools are then c's own.
func (s *Service) BindShells(c Caller, tools []tool.Tool) []tool.Tool {
	return s.shells.Bind(s.shellOwner(c), tools)
}

func (s *Service) shellOwner(c Caller) shell.Owner {
	if c.Group == nil {
		c.Group = s.orphans
	}
	return shell.Owner{Group: c.Group, AgentID: c.AgentID, SessionID: c.SessionID, RootSessionID: c.RootSessionID, Depth: c.Depth}
}

// newShells is the service's shell.Runner.
func (s *Service) newShells() *shell.Runner {
	return &shell.Runner{
		Tasks: s.cfg.Tasks, Desk: s.desk, Events: s.events, Beater: s.beater(), Tracker: tracker{s}, Now: s.cfg.Now,
		Owner: s.cfg.Owner, OutputPath: s.files().Path, MaxOutputBytes: s.cfg.ShellMaxOutputBytes, Log: s.log,
		// The profile is made last (New): it is asked at each start.
		Calls: func(id string) (string, string) {
			if s.profile == nil {
				return "", ""
			}
			return s.profile.ShellCalls(id)
		},
	}
}

// tracker tracks a background shell's run as the service's own runs are
// (shell.Tracker).
type tracker struct{ s *Service }

func (k tracker) Track(l *runs.Live) (deliver.Run, func()) {
	t := &liveTask{Live: l}
	k.s.track(t)
	return t, func() { k.s.untrack(l.ID) }
}

// beater keeps a background run's record's heartbeat fresh
// (internal/heartbeat).
func (s *Service) beater() heartbeat.Beater {
	return heartbeat.Beater{Tasks: s.cfg.Tasks, Watch: s.cfg.Watch, Interval: s.cfg.WatchInterval, Now: s.cfg.Now, Log: s.log}
}

// RefuseShell says why a message cannot go to task id, when it is a
// background command rather than an agent.
func (s *Service) RefuseShell(ctx context.Context, id string) error {
	kind := task.Kind("")
	if lt := s.live(id); lt != nil {
		kind = lt.TaskKind()
	} else if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		kind = rec.Kind
	}
	if kind == task.KindLocalBash {
		return fmt.Errorf("%s is a background command, not an agent: it cannot take messages (read its output, or stop it)", id)
	}
	return nil
}
