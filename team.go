package cadre

import (
	"context"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/view"
)

// The team a main session leads (docs/agents.md, "Teams"), as every front
// end shows it (view.Team): who is on it, what they share, and the board.
type (
	Team       = view.Team
	Teammate   = view.Teammate
	TeamBoard  = view.TeamBoard
	TeamCounts = view.TeamCounts
)

// Team returns the team the main session sessionID leads: its roster
// (known to the process running the session, or kept in the store by an
// earlier one) and its task list (from the store, so any process sharing
// it sees the same).
func (r *Runtime) Team(ctx context.Context, sessionID string) (Team, error) {
	tasks, err := r.TeamTasks(ctx, sessionID)
	if err != nil {
		return Team{}, err
	}
	name, members, ok := r.app.Subagents.Roster(ctx, sessionID)
	if !ok {
		return Team{Tasks: tasks}, nil
	}
	mates := make([]Teammate, 0, len(members))
	for _, m := range members {
		mates = append(mates, Teammate{ID: m.ID, Name: m.Name, Agent: m.Agent, State: m.State})
	}
	return view.Roster(name, mates, tasks), nil
}

// Team is the team this conversation's session leads, its runs numbered
// as Subagents numbers them.
func (c *Conversation) Team(ctx context.Context) (Team, error) {
	if err := session.ValidateID(c.target); err != nil {
		return Team{}, err
	}
	t, err := c.r.Team(ctx, c.target)
	if err != nil || len(t.Members) == 0 {
		return t, err
	}
	runs, err := c.Subagents(ctx)
	if err != nil {
		return Team{}, err
	}
	return t.Numbered(runs), nil
}
