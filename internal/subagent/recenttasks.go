package subagent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
)

// RecentTasks is what the main agent's per-turn context last read of its
// tree's newest task records; a conversation keeps one (Caller). With a
// model that answers at once, 10,000 children's notifications made
// hundreds of turns, and the read of the ten newest tasks cost about as
// much as the rest of a turn. A turn reuses the last read while nothing
// this process did can have changed it — no run or shell launched or
// moved to the background here since (Group.TaskMark), and each task read
// still in the status its run here is in, or ended — and for at most
// recentTasksFor, the bound on how late a change made by another process
// shows (a node running a dispatched child's own children, a sweep of a
// dead process's tasks).
type RecentTasks struct {
	mu   sync.Mutex
	recs []task.Task
	at   time.Time // when they were read, on the monotonic clock
	mark uint64    // the group's TaskMark before they were read
	read bool
}

// recentTasksFor is how long a read of the newest tasks may serve turns
// when this process changed none of them.
const recentTasksFor = time.Second

// recentTasks returns the ten newest task records of c's tree, from c's
// RecentTasks when they still hold.
func (s *Service) recentTasks(ctx context.Context, c Caller) []task.Task {
	read := func() ([]task.Task, error) {
		recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID, Limit: 10})
		if err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "list the session's background tasks for the main agent's context", "session_id", c.RootSessionID, "err", err)
		}
		return recs, err
	}
	seen := c.RecentTasks
	if seen == nil || c.Group == nil {
		recs, _ := read()
		return recs
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.read && time.Since(seen.at) < recentTasksFor && c.Group.TaskMark() == seen.mark && asRunsSay(c.Group, seen.recs) {
		return seen.recs
	}
	// The mark before the read: a launch during it is seen next turn.
	mark, at := c.Group.TaskMark(), time.Now()
	recs, err := read()
	seen.recs, seen.at, seen.mark, seen.read = slices.Clip(recs), at, mark, err == nil
	return recs
}

// asRunsSay reports whether each record is in the status its run in this
// process is in, or, for a task no longer going on here, ended: a status
// that no longer changes.
func asRunsSay(g *Group, recs []task.Task) bool {
	for _, rec := range recs {
		status, live := g.Status(rec.ID)
		if live && status != rec.Status || !live && !rec.Status.Terminal() {
			return false
		}
	}
	return true
}
