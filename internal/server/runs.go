package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/output"
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
}

// record is one entry of a run's event log: an event of the
// conversation, as its stream-json line, or the run's pending approvals.
type record struct {
	name string // the SSE event name: the line's type, or "approvals"
	data []byte
}

func newRun(conv *cadre.Conversation, approvals *cadre.Approvals, now time.Time) *run {
	return &run{id: conv.SessionID(), conv: conv, approvals: approvals, started: now, activity: cadre.NewActivity(), changed: make(chan struct{})}
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
		if ev.Type == cadre.EventResult && ev.ParentToolUseID == "" {
			r.result = ev.Result
		}
		r.mu.Unlock()
		r.add(record{name: string(ev.Type), data: data})
	}
	r.mu.Lock()
	r.ended = time.Now()
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
		Tokens: stats.Usage.Total(), CostUSD: stats.CostUSD}
	if !r.ended.IsZero() {
		t := r.ended
		out.Ended = &t
	}
	if r.result != nil {
		out.Result = &resultJSON{IsError: r.result.IsError, Result: r.result.Result, Errors: r.result.Errors, CostUSD: r.result.TotalCostUSD, NumTurns: r.result.NumTurns}
	}
	return out
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
