package subagent

import (
	"context"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/telemetry"
)

// What a run of a teammate asks of the profile that keeps the teams
// (Teams, profile.go; the claude profile's team.go).

// runSpan is the telemetry of r's run: a teammate's names its team too.
func (s *Service) runSpan(r *run) telemetry.Run {
	c := r.child.caller
	out := telemetry.Run{Agent: r.def.Name, SessionID: r.sess.Info.ID, Model: modelName(c.Model)}
	if c.Teammate != "" {
		out.Teammate = c.Teammate
		if tm := s.teams(); tm != nil {
			out.Team = tm.TeamName(c.RootSessionID)
		}
	}
	return out
}

// teammateIdle runs the TeammateIdle hooks of a teammate whose turn has
// ended: a reason, when a hook keeps it working, is its next prompt.
func (s *Service) teammateIdle(ctx context.Context, r *run, hooks *runner.Hooks, res *runner.Result, blocked int) string {
	tm := s.teams()
	if tm == nil || r.child.caller.Teammate == "" {
		return ""
	}
	return tm.Idle(ctx, r.child.caller, hooks, res, blocked)
}

// teamNotice is a teammate's idle notification, which replaces a
// background run's: ok is false when t is no teammate.
func (s *Service) teamNotice(t *liveTask, status task.Status, result string) (string, bool) {
	tm := s.teams()
	if tm == nil {
		return "", false
	}
	return tm.IdleNotice(t.Info, status, result)
}

// permitOf is what decides a child's calls: its policy, or, for a
// teammate, what its team's profile puts in front of it (plan approval).
func (s *Service) permitOf(ch *child) loop.Permitter {
	if tm := s.teams(); tm != nil && ch.caller.Teammate != "" {
		return tm.Permitter(ch.caller, &ch.policy)
	}
	return &ch.policy
}

// Roster is the team the main session root leads: its name and its
// members in join order, as front ends show it. ok is false when root
// leads none, or the profile keeps no teams.
func (s *Service) Roster(ctx context.Context, root string) (name string, members []TeamMember, ok bool) {
	tm := s.teams()
	if tm == nil {
		return "", nil, false
	}
	return tm.Roster(ctx, root)
}
