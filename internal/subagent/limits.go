package subagent

import (
	"context"
	"time"
)

// Spawn limits (DESIGN S-C2; issue 8, item 10): how many children one
// session may have at once, and how many foreground runs the process keeps
// in flight.

// reserveChild takes one of subagents.maxChildrenPerAgent places for a
// child of c's session and returns the reservation's key ("" when there is
// no limit). Counting the session's active runs and the places reserved
// but not yet launched under one lock is what makes the limit hold for
// spawns that run at the same time: ten calls of one message each saw
// "none active" before any of them had started.
func (s *Service) reserveChild(c Caller) (string, error) {
	return s.runs.ReserveChild(c.SessionID, s.cfg.Settings.MaxChildrenPerAgent, func() int { return c.Group.Active(c.SessionID) })
}

// adopt puts a launched run in its group and ends its child reservation
// in one step, so that no other spawn counts it twice (reserved and
// active) or not at all.
func (s *Service) adopt(r *run, t *liveTask) {
	// A new slice: launch's deferred unreserve holds the old one.
	r.reservations = s.runs.Adopt(r.c.SessionID, r.reservations, func() { r.c.Group.Add(t.Live) })
}

// foregroundSlot waits for a place among the foreground runs in flight at
// the child's depth (lane.Places). Each depth has its own places, so a
// foreground child waiting on its own foreground children never waits on a
// place its parent holds.
func (s *Service) foregroundSlot(ctx context.Context, depth int, wait time.Duration) (func(), error) {
	return s.fg[min(depth, MaxDepth)].Take(ctx, wait)
}
