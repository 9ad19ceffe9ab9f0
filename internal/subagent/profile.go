package subagent

import (
	"context"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// A Profile is one tool surface of DESIGN §12 — claude, opencode, harness,
// gateway — each a package under internal/subagent built on the calls of
// api.go alone. The runtime picks one (internal/subagent/profiles) and the
// Service offers its tools to the main agent and to every child that may
// spawn.
type Profile interface {
	// Tools are the tools c is offered beside its definition's: its spawn
	// tool and the tools that talk to its runs, or none (a leaf, or task
	// rules that end in "*": deny). c.Group is set.
	Tools(c Caller) []tool.Tool
	// SpawnTool is the spawn tool's name, which the main agent's per-turn
	// context names (S-A5).
	SpawnTool() string
	// ShellCalls say, in the profile's words, which calls read and stop
	// the background command id: its launch message names them.
	ShellCalls(id string) (output, stop string)
}

// NewProfile builds a Profile on the Service it offers tools for.
type NewProfile func(*Service) Profile

// Teams is what the core asks of a profile that keeps agent teams (S-A6,
// the claude profile's) about the runs of teammates.
type Teams interface {
	// TeamName is the name of the team of the main session root, "" when
	// it has none: a teammate's run's telemetry names it.
	TeamName(root string) string
	// Teammate is the name on the team of c's main session of the
	// teammate called name whose agent id is id, "" when id is no
	// teammate there: a teammate woken by a message from outside its
	// team's tools (c's) stays one. A team an earlier process led is read
	// back first.
	Teammate(c Caller, name, id string) string
	// TeamTool reports whether a teammate keeps the tool of this name
	// whatever its definition lists: it comes with being on the team.
	TeamTool(name string) bool
	// IdleNotice is the notification of a teammate's run that ended,
	// which replaces a background run's; ok is false when run is no
	// teammate's.
	IdleNotice(run RunInfo, status task.Status, result string) (text string, ok bool)
	// Idle runs the TeammateIdle hooks of c, a teammate whose turn ended
	// with res: a reason, when a hook keeps it working, is its next
	// prompt. blocked counts the blocks in a row so far.
	Idle(ctx context.Context, c Caller, hooks *runner.Hooks, res *runner.Result, blocked int) (reason string)
	// Permitter decides the calls of c, a teammate's run whose policy is
	// p: p, or a gate in front of it (a plan-mode teammate's).
	Permitter(c Caller, p *permission.Policy) loop.Permitter
	// Roster is the team the main session root leads, as front ends
	// show it; ok is false when it leads none.
	Roster(ctx context.Context, root string) (name string, members []TeamMember, ok bool)
}

// TeamMember is one teammate as the front ends show it.
type TeamMember struct {
	Name, Agent, ID string
	// State is "working" (starting, running or waiting for a lane
	// place), "idle" (its turn ended; a message wakes it) or "ended"
	// (stopped, or its record is gone).
	State string
}

// teams is the profile's Teams, nil when it keeps none.
func (s *Service) teams() Teams {
	t, _ := s.profile.(Teams)
	return t
}
