package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/task"
)

// Store is what a Node needs of the PostgreSQL store: the task records and
// session index it sweeps, and the node records (implemented by
// *postgres.DB).
type Store interface {
	task.Store
	session.Index
	RegisterNode(ctx context.Context, id, host string, pid int) error
	HeartbeatNode(ctx context.Context, id string) error
	LeaveNode(ctx context.Context, id string) error
	Nodes(ctx context.Context, ids []string) (time.Time, map[string]postgres.Node, error)
	PruneNodes(ctx context.Context, age time.Duration) (int64, error)
}

// Swept is what one Sweep changed.
type Swept struct {
	Tasks    []task.Task // failed, as stored
	Sessions []string    // ids of the sessions marked failed
}

// Sweep fails the work of nodes that are gone: the pending and running
// tasks (remote_agent excepted) whose owner node
//
//   - has not heartbeated for orphanAfter, or
//   - left (closed cleanly) with them unfinished, or
//   - has no node record (it died before registering, or its record was
//     pruned) while the task's own heartbeat, or else its creation, is
//     older than orphanAfter,
//
// with Error "executor lost: node <id> sent no heartbeat for N seconds"
// (a dispatched run still waiting in the shared queue, pending with no
// owner, belongs to no node and is left alone)
// and Finished now; then the running sessions of such nodes, the failed
// tasks' child sessions among them. When ended is not nil it is asked too,
// once per owner: an owner it says has ended is gone at once (the runtime
// passes the owner locks of its CADRE_HOME, which tell a process there that
// crashed without waiting for the timeout). Every time is the database's clock
// (read once per sweep), except a task's own heartbeat and creation,
// which its node stamped.
//
// Any number of nodes may sweep at once: task.Sweep re-checks each task
// inside its atomic update and fails it by the lifecycle's orphan event,
// which a task that ended meanwhile refuses, so each is failed, and
// reported, once.
func Sweep(ctx context.Context, st Store, orphanAfter time.Duration, ended func(owner string) bool) (Swept, error) {
	if orphanAfter <= 0 {
		return Swept{}, fmt.Errorf("sweep: orphan timeout %s is not positive", orphanAfter)
	}
	active, err := st.ListTasks(ctx, task.Filter{Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
	if err != nil {
		return Swept{}, fmt.Errorf("sweep: %w", err)
	}
	running, err := st.ListSessions(ctx, session.Filter{Statuses: []session.Status{session.StatusRunning}})
	if err != nil {
		return Swept{}, fmt.Errorf("sweep: %w", err)
	}
	owners := map[string]bool{}
	for _, t := range active {
		owners[t.Owner] = true
	}
	for _, s := range running {
		owners[s.Owner] = true
	}
	ids := make([]string, 0, len(owners))
	for id := range owners {
		ids = append(ids, id)
	}
	now, nodes, err := st.Nodes(ctx, ids)
	if err != nil {
		return Swept{}, fmt.Errorf("sweep: %w", err)
	}
	l := liveness{now: now, nodes: nodes, orphanAfter: orphanAfter, lost: map[string]bool{}, ended: map[string]bool{}}
	if ended != nil {
		for id := range owners {
			l.ended[id] = ended(id)
		}
	}

	var out Swept
	var errs []error
	out.Tasks, err = task.Sweep(ctx, st, l.judge, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("sweep tasks: %w", err))
	}
	var children []string
	for _, t := range out.Tasks {
		if t.ChildSessionID != "" {
			children = append(children, t.ChildSessionID)
		}
	}
	out.Sessions, err = session.Recover(ctx, st, l.alive, children, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("sweep sessions: %w", err))
	}
	return out, errors.Join(errs...)
}

// liveness judges owners by the node records of one sweep.
type liveness struct {
	now         time.Time
	nodes       map[string]postgres.Node
	orphanAfter time.Duration
	// lost are the owners with no record whose tasks were judged lost:
	// their sessions are gone too.
	lost map[string]bool
	// ended are the owners known to have ended (Sweep's ended, asked once:
	// it may destroy what it judged by).
	ended map[string]bool
}

// judge is a task.Judge.
func (l liveness) judge(t task.Task) (string, bool) {
	if t.Owner == "" && t.Status == task.StatusPending && t.Kind == task.KindLocalAgent {
		// Dispatched and waiting in the shared queue for a node with
		// a free place (store.dispatch any): no node has it to lose.
		return "", false
	}
	who := "node " + t.Owner
	if t.Owner == "" {
		who = "a node that recorded no id"
	}
	if l.ended[t.Owner] {
		return fmt.Sprintf("executor lost: %s ended before the task finished", who), true
	}
	if n, ok := l.nodes[t.Owner]; ok {
		if !n.Left.IsZero() {
			return fmt.Sprintf("executor lost: %s shut down at %s before the task finished", who, n.Left.UTC().Format(time.RFC3339)), true
		}
		silent := l.now.Sub(n.Heartbeat)
		if silent < l.orphanAfter {
			return "", false
		}
		return fmt.Sprintf("executor lost: %s sent no heartbeat for %d seconds", who, int(silent.Seconds())), true
	}
	// No record: the task's own times are all there is.
	last := t.Created
	if t.Heartbeat.After(last) {
		last = t.Heartbeat
	}
	silent := l.now.Sub(last)
	if silent < l.orphanAfter {
		return "", false
	}
	l.lost[t.Owner] = true
	return fmt.Sprintf("executor lost: %s sent no heartbeat for %d seconds", who, int(silent.Seconds())), true
}

// alive says whether a session's owner may still run it: a node whose
// record says it left or went silent does not; an owner with no record
// does unless its tasks were judged lost (a session has no heartbeat of
// its own to tell a dead owner from a young one).
func (l liveness) alive(owner string) bool {
	if l.ended[owner] {
		return false
	}
	if n, ok := l.nodes[owner]; ok {
		return n.Left.IsZero() && l.now.Sub(n.Heartbeat) < l.orphanAfter
	}
	return !l.lost[owner]
}

// Alive reports whether owner's node may still be running its work, as a
// sweep would judge it: false only when its record says it left or has
// been silent for orphanAfter. An owner with no record, or a record that
// cannot be read, counts as alive: calling a live node dead would fail its
// work.
func Alive(ctx context.Context, st Store, owner string, orphanAfter time.Duration) bool {
	now, nodes, err := st.Nodes(ctx, []string{owner})
	if err != nil {
		return true
	}
	l := liveness{now: now, nodes: nodes, orphanAfter: orphanAfter, lost: map[string]bool{}}
	return l.alive(owner)
}
