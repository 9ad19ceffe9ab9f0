package claude

import (
	"context"

	"github.com/cadre-dev/cadre/internal/subagent"
)

// Roster is the team the main session root leads (subagent.Teams).
func (s *profile) Roster(ctx context.Context, root string) (name string, members []subagent.TeamMember, ok bool) {
	s.teams.mu.Lock()
	tm := s.teams.by[root]
	s.teams.mu.Unlock()
	if tm == nil {
		// Not led in this process (yet): the roster an earlier one kept.
		lists := s.svc.Config().TaskLists
		if lists == nil {
			return "", nil, false
		}
		l, err := lists.GetList(ctx, root)
		if err != nil || l.Roster == nil {
			return "", nil, false
		}
		tm = &team{}
		tm.restore(l.Roster)
	}
	name, ms := tm.roster()
	for _, m := range ms {
		_, state := s.memberState(ctx, m)
		members = append(members, subagent.TeamMember{Name: m.name, Agent: m.agentType, ID: m.id, State: state})
	}
	return name, members, true
}
