package subagent

import (
	"context"
	"sync"

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
	live map[string]*liveTask // runs of this tree not yet finished
	// all are the runs the group ever started, in launch order: the
	// listing front ends number (Runs), which a run's end must not shift.
	// A run that ended is kept as its snapshot, not as the run: its
	// result holds the child's whole conversation.
	all     []groupRun
	changed chan struct{} // closed and replaced when a run ends
}

// NewGroup returns a group whose runs end when ctx does.
func NewGroup(ctx context.Context) *Group {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Group{ctx: ctx, cancel: cancel, live: map[string]*liveTask{}, changed: make(chan struct{})}
}

// Stop cancels every run of the group.
func (g *Group) Stop(cause error) { g.cancel(cause) }

// Wait blocks until every goroutine of the group has ended.
func (g *Group) Wait() { g.wg.Wait() }

func (g *Group) add(t *liveTask) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live[t.id] = t
	g.all = append(g.all, groupRun{live: t})
}

// addShell adds a background shell: it counts as a background run of the
// agent that started it (Running), but it is not a subagent run (Runs).
func (g *Group) addShell(t *liveTask) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live[t.id] = t
}

func (g *Group) remove(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, id)
	for i, r := range g.all {
		if r.live != nil && r.live.id == id {
			g.all[i] = groupRun{ended: r.live.run()}
		}
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

// Running counts the unfinished background runs started by the agent with
// this id ("" for the main agent).
func (g *Group) Running(parentAgentID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.live {
		if t.parentAgentID == parentAgentID && t.isBackground() {
			n++
		}
	}
	return n
}

// BackgroundRunning counts the unfinished background runs of the whole
// group, whoever started them.
func (g *Group) BackgroundRunning() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.live {
		if t.isBackground() && !t.ended() {
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
		if t.parentSessionID == parentSessionID && t.kind != task.KindLocalBash && !t.ended() {
			n++
		}
	}
	return n
}

// Background moves every foreground run of the group to the background
// (the SDK's and later the TUI's Ctrl+B); it returns how many it moved.
func (g *Group) Background() int {
	g.mu.Lock()
	var fg []*liveTask
	for _, t := range g.live {
		if !t.isBackground() {
			fg = append(fg, t)
		}
	}
	g.mu.Unlock()
	n := 0
	for _, t := range fg {
		if t.requestBackground() {
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
	var fg *liveTask
	for _, t := range g.live {
		if t.toolUseID == toolUseID && !t.ended() {
			fg = t
			break
		}
	}
	g.mu.Unlock()
	if fg == nil {
		return false, false
	}
	return !fg.isBackground() && fg.requestBackground(), true
}
