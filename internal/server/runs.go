package server

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/output"
	"github.com/cadre-dev/cadre/llm"
)

// run is one live conversation of the server and the log of its events,
// kept in memory so that a stream can start from the beginning or resume
// after the last event it saw (Last-Event-ID).
type run struct {
	id        string
	conv      *cadre.Conversation
	approvals *cadre.Approvals
	started   time.Time

	mu       sync.Mutex
	log      []record
	activity *cadre.Activity
	changed  chan struct{} // closed and replaced when log grows or the run ends
	ended    time.Time     // zero while the run lives
	result   *cadre.ResultInfo
	main     mainFigures
	// prompts are the subagent runs' prompts by agent id, from their
	// task_started events.
	prompts map[string]string
	// endStatus is the session record's status once the run has ended:
	// how the runtime recorded its end (completed, failed, killed).
	endStatus string
	// record reads it (Runtime.SessionTree's).
	record func(context.Context) (cadre.Session, error)
}

// mainFigures are the main agent's own, as its events tell them: what
// its row in the web view shows (the session record's change only when
// the conversation ends).
type mainFigures struct {
	prompt string   // the run's first prompt
	model  string   // the newest init event's
	tools  []string // the pool the model is offered
	tokens int64    // its own replies', reply by reply
	turns  int      // its model turns, counted when each turn ends
	// total is the tree's cost at the newest result; subCosts each
	// subagent run's share as the results listed them (the newest entry
	// wins): the total less them is the main agent's own.
	total    llm.Cost
	subCosts map[string]llm.Cost
	results  int
	// answered is when the newest turn ended: where an idle main agent's
	// bar on the timeline stops.
	answered time.Time
}

// observeLocked takes what the main agent's figures and the runs'
// prompts need from an event. r.mu is held.
func (r *run) observeLocked(ev cadre.Event) {
	main := ev.ParentToolUseID == ""
	switch {
	case ev.Init != nil && main:
		r.main.model, r.main.tools = ev.Init.Model, slices.Clone(ev.Init.Tools)
	case ev.Task != nil && ev.Subtype == cadre.SubtypeTaskStarted && ev.Task.TaskID != "" && ev.Task.Prompt != "":
		r.prompts[ev.Task.TaskID] = ev.Task.Prompt
	case ev.Type == cadre.EventAssistant && main && ev.Assistant != nil:
		r.main.tokens += ev.Assistant.Usage.Total()
	case ev.Type == cadre.EventResult && main && ev.Result != nil:
		r.result = ev.Result
		r.main.turns += ev.Result.NumTurns
		r.main.total = ev.Result.TotalCostUSD
		r.main.results++
		r.main.answered = ev.Time
		for _, s := range ev.Result.Subagents {
			r.main.subCosts[s.AgentID] = s.CostUSD
		}
	}
}

// ownCostLocked is the main agent's own cost: the tree's at the newest
// result less its subagents' shares. r.mu is held.
func (r *run) ownCostLocked() llm.Cost {
	total, known := r.main.total.USD()
	if !known {
		return llm.UnknownCost()
	}
	for _, c := range r.main.subCosts {
		v, _ := c.USD()
		total -= v
	}
	return llm.USD(max(total, 0))
}

// record is one entry of a run's event log: an event of the
// conversation, as its stream-json line, or the run's pending approvals.
type record struct {
	name string // the SSE event name: the line's type, or "approvals"
	data []byte
}

func newRun(conv *cadre.Conversation, approvals *cadre.Approvals, now time.Time) *run {
	return &run{id: conv.SessionID(), conv: conv, approvals: approvals, started: now, activity: cadre.NewActivity(), changed: make(chan struct{}),
		prompts: map[string]string{}, main: mainFigures{subCosts: map[string]llm.Cost{}}}
}

// pump reads the conversation's events into the log until it ends.
func (r *run) pump() {
	for ev, err := range r.conv.Events() {
		if err != nil {
			r.add(record{name: "error", data: errorJSON(err)})
			continue
		}
		data, err := json.Marshal(output.Line(ev))
		if err != nil {
			data = errorJSON(err)
		}
		r.mu.Lock()
		r.activity.Observe(ev)
		r.observeLocked(ev)
		r.mu.Unlock()
		r.add(record{name: string(ev.Type), data: data})
	}
	var status string
	if r.record != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if ss, err := r.record(ctx); err == nil {
			status = string(ss.Status)
		}
		cancel()
	}
	r.mu.Lock()
	r.ended, r.endStatus = time.Now(), status
	r.notifyLocked()
	r.mu.Unlock()
}

// watchApprovals logs the pending approvals each time they change, until
// ctx ends, so that a stream's reader sees a question as it is asked.
func (r *run) watchApprovals(ctx context.Context) {
	for {
		ch := r.approvals.Changed()
		r.add(record{name: "approvals", data: mustJSON(approvalsOf(r.id, r.approvals.Pending()))})
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

func (r *run) add(rec record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, rec)
	r.notifyLocked()
}

func (r *run) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// since returns the records from index from on, whether the run has
// ended, and a channel closed at the next change.
func (r *run) since(from int) ([]record, bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []record
	if from < len(r.log) {
		out = append(out, r.log[from:]...)
	}
	return out, !r.ended.IsZero(), r.changed
}

func (r *run) done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.ended.IsZero()
}

// info is the run as the API shows it.
func (r *run) info() runJSON {
	r.mu.Lock()
	defer r.mu.Unlock()
	stats := r.conv.Stats()
	out := runJSON{ID: r.id, SessionID: r.id, Started: r.started, Events: len(r.log), Running: r.ended.IsZero(), Pending: len(r.approvals.Pending()),
		Tokens: stats.Usage.Total(), CostUSD: stats.CostUSD, State: r.stateLocked(), Background: stats.BackgroundTasks,
		NumTurns: r.main.turns, MainTokens: r.main.tokens}
	if !r.ended.IsZero() {
		t := r.ended
		out.Ended = &t
	}
	if r.result != nil {
		out.Result = &resultJSON{IsError: r.result.IsError, Result: r.result.Result, Errors: r.result.Errors, CostUSD: r.result.TotalCostUSD, NumTurns: r.result.NumTurns}
	}
	return out
}

// stateLocked is the main agent's state: "running" in a turn, "idle"
// between turns of an open run (its background subagents may go on),
// and once the run has ended how it ended ("completed", "failed",
// "killed"). r.mu is held.
func (r *run) stateLocked() string {
	switch {
	case r.ended.IsZero() && r.conv.InTurn():
		return "running"
	case r.ended.IsZero():
		return "idle"
	case r.endStatus != "":
		return r.endStatus
	case r.result == nil || r.result.IsError:
		return "failed"
	default:
		return "completed"
	}
}

// activityBody is what the run's activity shows so far.
func (r *run) activityBody() activityBody {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := activityBody{Main: mainJSON{SessionID: r.id, Started: r.started, Calls: callsOf(r.activity.MainCalls())}, Runs: []activityJSON{}}
	if !r.ended.IsZero() {
		t := r.ended
		out.Main.Ended = &t
	}
	for _, a := range r.activity.Runs() {
		out.Runs = append(out.Runs, activityOf(a))
	}
	return out
}
