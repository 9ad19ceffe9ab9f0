package subagent

import (
	"context"
	"strings"
)

// TeamMember is one teammate as the front ends show it.
type TeamMember struct {
	Name, Agent, ID string
	// State is "working" (starting, running or waiting for a lane
	// place), "idle" (its turn ended; a message wakes it) or "ended"
	// (stopped, or its record is gone).
	State string
}

// Roster is the team the main session root leads in this process: its
// name and its members in join order. ok is false when root leads none.
func (s *Service) Roster(ctx context.Context, root string) (name string, members []TeamMember, ok bool) {
	s.teams.mu.Lock()
	tm := s.teams.by[root]
	s.teams.mu.Unlock()
	if tm == nil {
		// Not led in this process (yet): the roster an earlier one kept.
		if s.cfg.TaskLists == nil {
			return "", nil, false
		}
		l, err := s.cfg.TaskLists.GetList(ctx, root)
		if err != nil || l.Roster == nil {
			return "", nil, false
		}
		tm = &team{}
		tm.restore(l.Roster)
	}
	name, ms := tm.roster()
	for _, m := range ms {
		members = append(members, TeamMember{Name: m.name, Agent: m.agentType, ID: m.id, State: rosterState(s.memberState(ctx, m))})
	}
	return name, members, true
}

// rosterState folds memberState's words, written for a model, into the
// three states a roster shows.
func rosterState(s string) string {
	switch {
	case strings.HasPrefix(s, "idle"):
		return "idle"
	case s == "stopped" || s == "unknown":
		return "ended"
	}
	return "working"
}
