package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/uuid"
)

// Tag says whose messages a run publishes. The main session's tag has only
// RootSessionID; a subagent's carries the tool call that started it.
type Tag struct {
	// RootSessionID is the main session's id: stream-json reports every
	// line, subagents' included, under it.
	RootSessionID   string
	ParentToolUseID string
	AgentID         string
	AgentType       string
	TaskDescription string
}

// Totals adds up usage and cost by model over a whole run tree. It is safe
// for concurrent use: parallel subagents add to it at once.
type Totals struct {
	mu      sync.Mutex
	byModel map[string]event.ModelUsage
}

// Add records one run's usage and cost.
func (t *Totals) Add(model string, u llm.Usage, cost float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byModel == nil {
		t.byModel = map[string]event.ModelUsage{}
	}
	m := t.byModel[model]
	m.Usage = m.Usage.Add(u)
	m.CostUSD += cost
	t.byModel[model] = m
}

// Snapshot returns the sums so far.
func (t *Totals) Snapshot() (usage llm.Usage, cost float64, byModel map[string]event.ModelUsage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byModel = make(map[string]event.ModelUsage, len(t.byModel))
	for name, m := range t.byModel {
		byModel[name] = m
		usage = usage.Add(m.Usage)
		cost += m.CostUSD
	}
	return usage, cost, byModel
}

// Spec is one run.
type Spec struct {
	Session *session.Session
	// Loop configures the loop; OnStep is set by Run.
	Loop loop.Config
	Tag  Tag
	// Cost prices this run's usage; nil means 0.
	Cost func(llm.Usage) float64
	// Totals, if set, receives this run's usage and cost.
	Totals *Totals
	// PublishPrompt publishes the prompt as a user event (subagents do, as
	// Claude Code does; the main session's prompt is the user's own).
	PublishPrompt bool
	Bus           *event.Bus
	Now           func() time.Time
}

// Result is how a run ended.
type Result struct {
	*loop.Outcome
	Cost     float64
	Duration time.Duration
	Status   session.Status
}

// Run runs the loop on history plus prompt and finishes the session. It
// always returns a Result; a failure is in Result.Err.
func Run(ctx context.Context, spec Spec, history []llm.Message, prompt llm.Message) *Result {
	if spec.Now == nil {
		spec.Now = time.Now
	}
	start := spec.Now()
	r := &recorder{spec: spec}
	var out *loop.Outcome
	err := r.record(loop.Step{Message: prompt}, spec.PublishPrompt)
	if err == nil {
		cfg := spec.Loop
		cfg.OnStep = func(_ context.Context, s loop.Step) error { return r.record(s, true) }
		out, _ = loop.Run(ctx, cfg, append(append([]llm.Message(nil), history...), prompt))
	}
	if out == nil {
		out = &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}
	}
	res := &Result{Outcome: out, Duration: spec.Now().Sub(start), Status: session.StatusCompleted}
	if spec.Cost != nil {
		res.Cost = spec.Cost(out.Usage)
	}
	if spec.Totals != nil && spec.Loop.Model != nil {
		spec.Totals.Add(spec.Loop.Model.Name(), out.Usage, res.Cost)
	}
	switch {
	case errors.Is(out.Err, context.Canceled) || errors.Is(out.Err, context.DeadlineExceeded):
		res.Status = session.StatusKilled
	case out.Err != nil:
		res.Status = session.StatusFailed
	}
	// The run's context may be cancelled; its record must still be saved.
	if ferr := spec.Session.Finish(context.Background(), res.Status, out.Usage, res.Cost, out.Turns); ferr != nil {
		if out.Err == nil {
			out.Subtype = loop.SubtypeExecution
		}
		out.Err = errors.Join(out.Err, ferr)
	}
	return res
}

type recorder struct {
	spec Spec
}

// record appends a message to the transcript, then publishes it under the
// same uuid. The transcript comes first: what was shown was also saved.
func (r *recorder) record(s loop.Step, publish bool) error {
	id := uuid.NewString()
	entry := session.Entry{Type: string(s.Message.Role), UUID: id, Message: &s.Message}
	t := r.spec.Tag
	ev := event.Event{
		UUID: id, Message: &s.Message, SessionID: t.RootSessionID, Time: r.spec.Now(),
		ParentToolUseID: t.ParentToolUseID, AgentID: t.AgentID, AgentType: t.AgentType, TaskDescription: t.TaskDescription,
	}
	if s.Response != nil {
		entry.MessageID, entry.Model, entry.StopReason = s.Response.ID, s.Response.Model, string(s.Response.StopReason)
		u := s.Response.Usage
		entry.Usage = &u
		ev.Type = event.TypeAssistant
		ev.Assistant = &event.Assistant{MessageID: s.Response.ID, Model: s.Response.Model, StopReason: s.Response.StopReason, Usage: u}
	} else {
		ev.Type = event.TypeUser
		switch len(s.ToolMeta) {
		case 0:
		case 1:
			for _, m := range s.ToolMeta {
				ev.ToolUseResult = m
			}
		default:
			ev.ToolUseResult = s.ToolMeta
		}
	}
	if err := r.spec.Session.Append(entry); err != nil {
		return err
	}
	if publish && r.spec.Bus != nil {
		r.spec.Bus.Publish(ev)
	}
	return nil
}
