package subagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/ids"
)

// Spawn limits (DESIGN S-C2; issue 8, item 10): how many children one
// session may have at once, and how many foreground runs the process keeps
// in flight.

// childKey is the prefix of a reservation for a child of the session.
func childKey(sessionID string) string { return "child\x00" + sessionID + "\x00" }

// reserveChild takes one of subagents.maxChildrenPerAgent places for a
// child of c's session and returns the reservation's key ("" when there is
// no limit). Counting the session's active runs and the places reserved
// but not yet launched under one lock is what makes the limit hold for
// spawns that run at the same time: ten calls of one message each saw
// "none active" before any of them had started.
func (s *Service) reserveChild(c Caller) (string, error) {
	limit := s.cfg.Settings.MaxChildrenPerAgent
	if limit <= 0 {
		return "", nil
	}
	prefix := childKey(c.SessionID)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := c.Group.Active(c.SessionID)
	for k := range s.reserved {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	if n >= limit {
		return "", fmt.Errorf("this agent already has %d active subagents, the most subagents.maxChildrenPerAgent allows; wait for one to finish", limit)
	}
	key := prefix + ids.New()
	s.reserved[key] = true
	return key, nil
}

// adopt puts a launched run in its group and ends its child reservation
// in one step, so that no other spawn counts it twice (reserved and
// active) or not at all.
func (s *Service) adopt(r *run, t *liveTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.c.Group.Add(t.Live)
	prefix := childKey(r.c.SessionID)
	// A new slice: launch's deferred unreserve holds the old one.
	var keep []string
	for _, k := range r.reservations {
		if strings.HasPrefix(k, prefix) {
			delete(s.reserved, k)
			continue
		}
		keep = append(keep, k)
	}
	r.reservations = keep
}

// foregroundSlot waits for a place among the foreground runs in flight at
// the child's depth (lane.Places). Each depth has its own places, so a
// foreground child waiting on its own foreground children never waits on a
// place its parent holds.
func (s *Service) foregroundSlot(ctx context.Context, depth int, wait time.Duration) (func(), error) {
	return s.fg[min(depth, MaxDepth)].Take(ctx, wait)
}
