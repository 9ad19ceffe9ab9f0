package subagent

import (
	"context"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
)

// A team's roster is kept beside its task list (tasklist.Roster), written
// whenever a teammate joins, launches or has its plan answered, and read
// when a process first needs the team of a lead an earlier process led: a
// resumed lead finds its teammates by name, wakes them as teammates, and
// a plan-mode teammate stays in plan mode until approved.

// rosterTimeout bounds the read of a stored roster, which a lead's tool
// call waits for once per process.
const rosterTimeout = 30 * time.Second

// storedRoster is the roster kept for c's team, nil when there is none or
// it cannot be read (a warning says why: the team then starts empty).
func (s *Service) storedRoster(c Caller) *tasklist.Roster {
	if s.cfg.TaskLists == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Group.ctx, rosterTimeout)
	defer cancel()
	l, err := s.cfg.TaskLists.GetList(ctx, c.RootSessionID)
	if err != nil {
		s.log.WarnContext(ctx, "read a team's roster; the team starts empty", "session_id", c.RootSessionID, "err", err)
		return nil
	}
	return l.Roster
}

// restore fills a new team from its stored roster.
func (tm *team) restore(r *tasklist.Roster) {
	if r == nil {
		return
	}
	tm.name, tm.named = r.Team, r.Team != defaultTeamName
	for _, m := range r.Members {
		mem := &member{name: m.Name, agentType: m.Agent, id: m.ID, call: m.Call}
		switch m.Plan {
		case "planning":
			mem.plan = &planState{}
		case "approved":
			mem.plan = &planState{}
			mem.plan.approved.Store(true)
		}
		tm.members = append(tm.members, mem)
	}
}

// snapshot is the team as a roster to keep.
func (tm *team) snapshot() *tasklist.Roster {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	r := &tasklist.Roster{Team: tm.name, Members: []tasklist.Member{}}
	for _, m := range tm.members {
		keep := tasklist.Member{Name: m.name, Agent: m.agentType, ID: m.id, Call: m.call}
		if m.plan != nil {
			keep.Plan = "planning"
			if m.plan.approved.Load() {
				keep.Plan = "approved"
			}
		}
		r.Members = append(r.Members, keep)
	}
	return r
}

// saveRoster keeps the team's roster as it is now. The snapshot is taken
// under the store's lock of the list, so concurrent saves end with the
// newest. A failure is a warning: the team goes on in this process.
func (s *Service) saveRoster(ctx context.Context, tm *team) {
	if s.cfg.TaskLists == nil {
		return
	}
	_, err := s.cfg.TaskLists.UpdateList(context.WithoutCancel(ctx), tm.id, func(l *tasklist.List) error {
		l.Roster = tm.snapshot()
		return nil
	})
	if err != nil {
		s.log.WarnContext(ctx, "keep a team's roster", "session_id", tm.id, "err", err)
	}
}
