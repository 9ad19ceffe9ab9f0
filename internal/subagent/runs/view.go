package runs

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
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
	// Recorded is what its session's record says since this process
	// wrote the run's end there; nil while it runs, or when its end was
	// written elsewhere or failed to be: then only the record knows.
	Recorded *Recorded
}

// Recorded is the part of a run's session record that its end wrote: the
// session's model, and its turns, usage and cost summed over every run of
// the session.
type Recorded struct {
	Model  string
	Turns  int
	Usage  llm.Usage
	Cost   llm.Cost
	Status session.Status
}

// recordedOf is what of info a run's Recorded keeps.
func recordedOf(info session.Info) *Recorded {
	return &Recorded{Model: info.Model, Turns: info.NumTurns, Usage: info.Usage, Cost: info.CostUSD, Status: info.Status}
}

// View snapshots t.
func (t *Live) View() Run {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Run{
		ID: t.ID, ParentSessionID: t.ParentSessionID, ToolUseID: t.ToolUseID, Agent: t.AgentType, Name: t.Name,
		Description: t.Description, Prompt: t.Prompt, Depth: t.Depth, Background: t.phase.Background(), Cleanup: t.Cleanup,
		Started: t.Started(), Ended: t.endedAt, Status: t.statusLocked(),
		Tokens: t.tokens, ToolUses: t.toolUses, LastTool: t.lastTool, Result: t.text,
		Recorded: t.recorded,
	}
	if t.phase.Ended() {
		if text := strings.TrimSpace(t.final.Result); text != "" {
			r.Result = text
		}
		if t.final.Err != nil {
			r.Err = t.final.Err.Error()
		}
	}
	return r
}

// Status is the run's status now: pending while it waits for its lane
// place, running, then the terminal status its end decided.
func (t *Live) Status() task.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.statusLocked()
}

// statusLocked is Status; the caller holds t.mu.
func (t *Live) statusLocked() task.Status {
	switch {
	case t.phase.Ended():
		return t.status
	case t.waiting:
		return task.StatusPending
	}
	return task.StatusRunning
}

// groupRun is a run of a group: the run while it goes on, its snapshot
// once it has ended.
type groupRun struct {
	live  *Live
	ended Run
	// logged is 1 + the place of the run's newest entry in the group's
	// log of changes, 0 before it has one.
	logged int
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

// RunsChanged lists, in launch order, the runs that changed since mark —
// launched, started, spent or ended — where mark is a place in the
// group's log of changes (0 for all). ends holds, for each run listed that
// has ended, the place of its end in the log, -1 for a run going on: a
// caller that wants to see an ended run again passes that as the next
// mark. next is the mark of this moment. The cost is what changed since
// mark: 10,000 runs waiting in the lane are not visited for each result.
func (g *Group) RunsChanged(mark int) (runs []Run, ends []int, next int) {
	type change struct{ at, logged int }
	g.mu.Lock()
	mark = min(max(mark, 0), len(g.changes))
	var changes []change
	for k, i := range g.changes[mark:] {
		if i >= 0 {
			changes = append(changes, change{i, mark + k})
		}
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	all := make([]groupRun, len(changes))
	ends = make([]int, len(changes))
	for k, c := range changes {
		all[k] = g.all[c.at]
		ends[k] = -1
		if all[k].live == nil {
			ends[k] = c.logged
		}
	}
	next = len(g.changes)
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
