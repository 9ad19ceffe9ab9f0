package runs

import (
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
)

// Run is what a front end shows of one run of a group: fixed facts from
// its launch and live figures, read at one moment.
type Run struct {
	ID              string // agent id = task id = child session id
	ParentSessionID string // the session whose agent started it
	ToolUseID       string // the spawn call that started it
	Agent           string // its type
	Name            string // its SendMessage name, "" if none
	Description     string
	Prompt          string
	Depth           int // 1 for a child of the main agent
	Background      bool
	// Cleanup is the run's own cleanup setting, "" when it takes the
	// settings' (subagent.Service.Cleanup).
	Cleanup string

	Started time.Time
	// Ended is zero while the run goes on; Status is then running.
	Ended  time.Time
	Status task.Status

	Tokens   int64
	ToolUses int
	LastTool string // the tool it called last
	// Result is its newest text (the final one once ended); Err why it
	// failed, if it did.
	Result, Err string
}

// View snapshots t.
func (t *Live) View() Run {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Run{
		ID: t.ID, ParentSessionID: t.ParentSessionID, ToolUseID: t.ToolUseID, Agent: t.AgentType, Name: t.Name,
		Description: t.Description, Prompt: t.Prompt, Depth: t.Depth, Background: t.phase.Background(), Cleanup: t.Cleanup,
		Started: t.Started(), Ended: t.endedAt, Status: task.StatusRunning,
		Tokens: t.tokens, ToolUses: t.toolUses, LastTool: t.lastTool, Result: t.text,
	}
	if !t.phase.Ended() && t.waiting {
		r.Status = task.StatusPending
	}
	if t.phase.Ended() {
		r.Status = t.status
		if text := strings.TrimSpace(t.final.Result); text != "" {
			r.Result = text
		}
		if t.final.Err != nil {
			r.Err = t.final.Err.Error()
		}
	}
	return r
}

// groupRun is a run of a group: the run while it goes on, its snapshot
// once it has ended.
type groupRun struct {
	live  *Live
	ended Run
}

// Runs lists every run the group started, at any depth, in launch order,
// which a later launch or an end never changes: front ends number runs
// by it. An agent continued under its id keeps its first place and shows
// its newest run.
func (g *Group) Runs() []Run {
	g.mu.Lock()
	all := append([]groupRun(nil), g.all...)
	g.mu.Unlock()
	var out []Run
	at := map[string]int{}
	for _, gr := range all {
		r := gr.ended
		if gr.live != nil {
			r = gr.live.View()
		}
		if i, ok := at[r.ID]; ok {
			out[i] = r
			continue
		}
		at[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

// RunsChanged lists, in launch order, the runs that may have changed since
// mark: every run going on, and every run that ended since (mark counts
// the ends; 0 for all). ends holds, for each run listed, the count of ends
// before its own, -1 for a run going on: a caller that wants to see an
// ended run again passes that as the next mark. next is the mark of this
// moment. A result of a tree of 10,000 runs lists what changed since the
// one before without copying every run.
func (g *Group) RunsChanged(mark int) (runs []Run, ends []int, next int) {
	g.mu.Lock()
	mark = min(max(mark, 0), len(g.ends))
	endOf := make(map[int]int, len(g.ends)-mark)
	at := make([]int, 0, len(g.at)+len(g.ends)-mark)
	for _, i := range g.at {
		at = append(at, i)
	}
	for k, i := range g.ends[mark:] {
		endOf[i] = mark + k
		at = append(at, i)
	}
	slices.Sort(at)
	at = slices.Compact(at)
	all := make([]groupRun, len(at))
	ends = make([]int, len(at))
	for k, i := range at {
		all[k] = g.all[i]
		ends[k] = -1
		if e, ok := endOf[i]; ok && all[k].live == nil {
			ends[k] = e
		}
	}
	next = len(g.ends)
	g.mu.Unlock()
	runs = make([]Run, len(all))
	for k, gr := range all {
		runs[k] = gr.ended
		if gr.live != nil {
			runs[k] = gr.live.View()
		}
	}
	return runs, ends, next
}
