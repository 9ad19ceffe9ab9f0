package runs

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cadre-dev/cadre/internal/task"
)

// Group owns the runs of one run tree (a main session and everything it
// started). Background runs live as long as the group, not as long as the
// turn that started them; stopping the group stops them all, transitively
// (S-C4), and Wait returns once every goroutine it started has ended.
type Group struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*Live // runs of this tree not yet finished
	// all are the runs the group ever started, in launch order: the
	// listing front ends number (Runs), which a run's end must not shift.
	// A run that ended is kept as its snapshot, not as the run: its
	// result holds the child's whole conversation.
	all []groupRun
	// at is where each live run's entry is in all: a run's end must not
	// scan every run the group started (10,000 children made that
	// quadratic).
	at map[string]int
	// changes is the log of what happened to the runs — launched,
	// started, spent, ended — as their places in all, oldest first: what
	// RunsChanged reads from a mark on, so that a result costs what
	// changed, not every run going on. A run's earlier entry is cleared
	// (-1) when it changes again: only its newest counts.
	changes []int
	// children are the live runs by the agent that started them: an
	// agent waiting for its own background runs looks at its own, not at
	// every run of the tree.
	children map[string]*childRuns
	changed  chan struct{} // closed and replaced when a run ends
	// started is set once the group has started a run or a shell.
	started bool
	// launches counts what may have added a task record of the tree in
	// this process: a run or a shell launched, a run moved to the
	// background (TaskMark). Atomic: a move counts under the run's lock,
	// which the group's must not be taken under.
	launches atomic.Uint64
}

// childRuns are the live runs one agent started. A Go map keeps the room
// it once needed, and iterating it visits that room: after a burst of
// 10,000 children it is made again once a few are left.
type childRuns struct {
	runs map[string]*Live
	peak int
}

// NewGroup returns a group whose runs end when ctx does.
func NewGroup(ctx context.Context) *Group {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Group{ctx: ctx, cancel: cancel, live: map[string]*Live{}, at: map[string]int{}, children: map[string]*childRuns{}, changed: make(chan struct{})}
}

// Stop cancels every run of the group.
func (g *Group) Stop(cause error) { g.cancel(cause) }

// Wait blocks until every goroutine of the group has ended.
func (g *Group) Wait() { g.wg.Wait() }

// Go runs f in a goroutine of the group, which Wait waits for.
func (g *Group) Go(f func()) { g.wg.Go(f) }

// Hold counts a goroutine-to-be of the group — a run waiting for a lane
// place, which a callback starts later — until release is called, once.
func (g *Group) Hold() (release func()) {
	g.wg.Add(1)
	return g.wg.Done
}

// Context is the group's context: it ends when the group's runs are
// stopped (a profile forgets what it kept for the tree then).
func (g *Group) Context() context.Context { return g.ctx }

// Add adds a launched run to the group.
func (g *Group) Add(t *Live) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = true
	g.launches.Add(1)
	g.at[t.ID] = len(g.all)
	g.all = append(g.all, groupRun{live: t})
	g.logChange(len(g.all) - 1)
	g.addLive(t)
}

// logChange logs that the entry of the run at place i in all changed.
func (g *Group) logChange(i int) {
	if l := g.all[i].logged; l > 0 {
		g.changes[l-1] = -1
	}
	g.changes = append(g.changes, i)
	g.all[i].logged = len(g.changes)
}

// touched logs that run t started or spent, which its entry in a result
// shows. The caller must not hold t.mu (remove takes it under g.mu).
func (g *Group) touched(t *Live) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if i, ok := g.at[t.ID]; ok && g.all[i].live == t {
		g.logChange(i)
	}
}

// AddShell adds a background shell: it counts as a background run of the
// agent that started it (HasRunning), but it is not a subagent run (Runs).
func (g *Group) AddShell(t *Live) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = true
	g.launches.Add(1)
	g.addLive(t)
}

func (g *Group) addLive(t *Live) {
	g.live[t.ID] = t
	c := g.children[t.ParentAgentID]
	if c == nil {
		c = &childRuns{runs: map[string]*Live{}}
		g.children[t.ParentAgentID] = c
	}
	c.runs[t.ID] = t
	c.peak = max(c.peak, len(c.runs))
}

func (g *Group) remove(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.live[id]; ok {
		delete(g.live, id)
		if c := g.children[t.ParentAgentID]; c != nil && c.runs[id] == t {
			delete(c.runs, id)
			switch n := len(c.runs); {
			case n == 0:
				delete(g.children, t.ParentAgentID)
			case c.peak >= 1024 && n < c.peak/8:
				// Copied key by key: maps.Clone keeps the room too.
				runs := make(map[string]*Live, n)
				for k, v := range c.runs {
					runs[k] = v
				}
				c.runs, c.peak = runs, n
			}
		}
	}
	if i, ok := g.at[id]; ok {
		g.all[i] = groupRun{ended: g.all[i].live.View(), logged: g.all[i].logged}
		delete(g.at, id)
		g.logChange(i)
	}
	close(g.changed)
	g.changed = make(chan struct{})
}

// Changed is closed the next time a run of the group ends.
func (g *Group) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// HasRunning reports whether an unfinished background run started by the
// agent with this id ("" for the main agent) is left: what a waiting
// agent asks each time a run ends, so it stops at the first it finds.
func (g *Group) HasRunning(parentAgentID string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.children[parentAgentID]
	if c == nil {
		return false
	}
	for _, t := range c.runs {
		if t.IsBackground() {
			return true
		}
	}
	return false
}

// BackgroundRunning counts the unfinished background runs of the whole
// group, whoever started them.
func (g *Group) BackgroundRunning() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.live {
		if t.IsBackground() && !t.Ended() {
			n++
		}
	}
	return n
}

// Active counts the unfinished runs (foreground or not) started from the
// session with this id, for subagents.maxChildrenPerAgent.
func (g *Group) Active(parentSessionID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.live {
		// A run whose end is decided no longer counts, though it is
		// still announcing it.
		if t.ParentSessionID == parentSessionID && t.Kind != task.KindLocalBash && !t.Ended() {
			n++
		}
	}
	return n
}

// Background moves every foreground run of the group to the background
// (the SDK's and later the TUI's Ctrl+B); it returns how many it moved.
func (g *Group) Background() int {
	g.mu.Lock()
	var fg []*Live
	for _, t := range g.live {
		if !t.IsBackground() {
			fg = append(fg, t)
		}
	}
	g.mu.Unlock()
	n := 0
	for _, t := range fg {
		if t.RequestBackground() {
			n++
		}
	}
	return n
}

// BackgroundCall moves the foreground run started by the spawn call
// toolUseID to the background (Ctrl+B on one subagent). found says whether
// such a run of the group is going on; moved, whether it moved.
func (g *Group) BackgroundCall(toolUseID string) (moved, found bool) {
	g.mu.Lock()
	var fg *Live
	for _, t := range g.live {
		if t.ToolUseID == toolUseID && !t.Ended() {
			fg = t
			break
		}
	}
	g.mu.Unlock()
	if fg == nil {
		return false, false
	}
	return !fg.IsBackground() && fg.RequestBackground(), true
}

// TaskMark changes whenever this process may have added a task record of
// the tree: a run or a shell launched, a run moved to the background.
// Between two equal marks, the tree's records that this process wrote
// are the same tasks, whose statuses their runs tell (Status).
func (g *Group) TaskMark() uint64 {
	if g == nil {
		return 0
	}
	return g.launches.Load()
}

// Status is the status of the run or shell with this id as it goes on in
// this process (pending, running, or the terminal status whose record is
// being written); live is false once it is over here, or if it never
// ran here.
func (g *Group) Status(id string) (status task.Status, live bool) {
	g.mu.Lock()
	t, ok := g.live[id]
	g.mu.Unlock()
	if !ok {
		return "", false
	}
	return t.Status(), true
}

// Started reports whether the group has ever started a run or a shell.
func (g *Group) Started() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}
