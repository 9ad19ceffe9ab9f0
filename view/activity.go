package view

import (
	"slices"
	"time"

	"github.com/cadre-dev/cadre/event"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
)

// Activity follows a conversation's events and keeps what its subagent
// runs are doing, at any depth: the picture an interactive display or a
// web view draws (who runs under which call, its current tool, elapsed
// time, tokens), built from the events alone so that every front end gets
// the same one. It is not safe for concurrent use: one reader of the
// events owns it.
type Activity struct {
	runs  map[string]*ActivityRun // by the tool-use id of the call that started it
	order []*ActivityRun          // start order
	// owner maps each tool call seen to the run that made it ("" for the
	// main agent), so a grandchild finds its parent.
	owner map[string]string
	// main are the main agent's own tool calls.
	main []ActivityCall
}

// ActivityCall is one tool call an agent made, when its event came: what
// a timeline marks on the agent's bar.
type ActivityCall struct {
	ID, Name string
	At       time.Time
}

// ActivityRun is one subagent run of a conversation as its events show it.
type ActivityRun struct {
	// ToolUseID is the call that started the run (its events'
	// ParentToolUseID); ParentToolUseID is the call that started the run
	// that made that call, "" when the main agent made it.
	ToolUseID, ParentToolUseID string
	// Depth is 1 for a child of the main agent, 2 for a grandchild…
	Depth int
	// AgentID is the run's agent (and task) id; AgentType its definition;
	// Description the call's; Color the agent file's ("" for none).
	AgentID, AgentType, Description, Color string
	// Background is set once the run is, or has moved to, the background.
	Background bool
	Started    time.Time
	// Ended is set when the run has ended, with Status (completed,
	// failed, killed or timeout) and Summary.
	Ended   time.Time
	Status  record.TaskStatus
	Summary string
	// Tokens and ToolUses are the run's so far (final once it ended).
	Tokens   int64
	ToolUses int
	// Tool is the newest tool call's name and Input its input, while the
	// run waits on it; "" while the model answers.
	Tool  string
	Input []byte
	// Calls are every tool call the run made, in order.
	Calls []ActivityCall
}

// Done reports whether the run has ended.
func (r ActivityRun) Done() bool { return !r.Ended.IsZero() }

// Elapsed is how long the run has run, up to now or to its end.
func (r ActivityRun) Elapsed(now time.Time) time.Duration {
	end := r.Ended
	if end.IsZero() {
		end = now
	}
	if end.Before(r.Started) {
		return 0
	}
	return end.Sub(r.Started)
}

// NewActivity returns an empty Activity.
func NewActivity() *Activity {
	return &Activity{runs: map[string]*ActivityRun{}, owner: map[string]string{}}
}

// Observe takes the next event of the conversation.
func (a *Activity) Observe(e event.Event) {
	if e.Type == event.EventSystem && e.Task != nil && e.Task.ToolUseID != "" && e.Task.Kind != record.TaskLocalBash {
		a.task(e)
		return
	}
	if e.Message == nil || (e.Type != event.EventAssistant && e.Type != event.EventUser) {
		return
	}
	for _, b := range e.Message.ToolUses() {
		a.owner[b.ID] = e.ParentToolUseID
	}
	if e.ParentToolUseID == "" {
		if e.Type == event.EventAssistant {
			for _, b := range e.Message.ToolUses() {
				a.main = append(a.main, ActivityCall{ID: b.ID, Name: b.Name, At: e.Time})
			}
		}
		return
	}
	r := a.run(e.ParentToolUseID, e.Time)
	if r.Done() {
		return // a late event of a run that ended
	}
	if r.AgentType == "" {
		r.AgentType = e.AgentType
	}
	if r.AgentID == "" {
		r.AgentID = e.AgentID
	}
	if r.Description == "" {
		r.Description = e.TaskDescription
	}
	if r.Color == "" {
		r.Color = e.AgentColor
	}
	if e.Type == event.EventUser {
		// The run's calls returned: it waits on the model again.
		if slices.ContainsFunc(e.Message.Content, func(b llm.Block) bool { return b.Type == llm.BlockToolResult }) {
			r.Tool, r.Input = "", nil
		}
		return
	}
	if e.Assistant != nil {
		r.Tokens += e.Assistant.Usage.Total()
	}
	r.Tool, r.Input = "", nil
	for _, b := range e.Message.ToolUses() {
		r.ToolUses++
		r.Tool, r.Input = b.Name, b.Input
		r.Calls = append(r.Calls, ActivityCall{ID: b.ID, Name: b.Name, At: e.Time})
	}
}

// task takes a task_started, task_progress or task_notification event.
func (a *Activity) task(e event.Event) {
	t := e.Task
	r := a.run(t.ToolUseID, e.Time)
	if t.TaskID != "" {
		r.AgentID = t.TaskID
	}
	if t.AgentType != "" {
		r.AgentType = t.AgentType
	}
	if t.Description != "" {
		r.Description = t.Description
	}
	if t.SpawnDepth > 0 {
		r.Depth = t.SpawnDepth
	}
	switch e.Subtype {
	case event.SubtypeTaskStarted:
		r.Background = r.Background || t.Background
	case event.SubtypeTaskProgress:
		if t.Usage != nil && t.Usage.TotalTokens > r.Tokens {
			r.Tokens = t.Usage.TotalTokens
		}
		if t.Usage != nil && t.Usage.ToolUses > r.ToolUses {
			r.ToolUses = t.Usage.ToolUses
		}
		if t.LastToolName != "" && r.Tool == "" {
			r.Tool = t.LastToolName
		}
	case event.SubtypeTaskNotification:
		r.Ended, r.Status, r.Summary, r.Tool, r.Input = e.Time, t.Status, t.Summary, "", nil
		if r.Ended.IsZero() {
			r.Ended = r.Started
		}
		if t.Usage != nil {
			r.Tokens, r.ToolUses = max(r.Tokens, t.Usage.TotalTokens), max(r.ToolUses, t.Usage.ToolUses)
		}
	}
}

// run finds or starts the run of the call id.
func (a *Activity) run(id string, at time.Time) *ActivityRun {
	if r := a.runs[id]; r != nil {
		return r
	}
	r := &ActivityRun{ToolUseID: id, ParentToolUseID: a.owner[id], Depth: 1, Started: at}
	if p := a.runs[r.ParentToolUseID]; p != nil {
		r.Depth = p.Depth + 1
	}
	a.runs[id] = r
	a.order = append(a.order, r)
	return r
}

// Runs are every run seen, in start order.
func (a *Activity) Runs() []ActivityRun {
	out := make([]ActivityRun, len(a.order))
	for i, r := range a.order {
		out[i] = *r
		out[i].Calls = slices.Clone(r.Calls)
	}
	return out
}

// MainCalls are the main agent's own tool calls, in order.
func (a *Activity) MainCalls() []ActivityCall { return slices.Clone(a.main) }

// Run is the run the call toolUseID started, if any.
func (a *Activity) Run(toolUseID string) (ActivityRun, bool) {
	r, ok := a.runs[toolUseID]
	if !ok {
		return ActivityRun{}, false
	}
	return *r, true
}

// Children are the runs started by calls of the run toolUseID ("" for the
// main agent's), in start order.
func (a *Activity) Children(toolUseID string) []ActivityRun {
	var out []ActivityRun
	for _, r := range a.order {
		if r.ParentToolUseID == toolUseID {
			out = append(out, *r)
		}
	}
	return out
}

// Running counts the runs not ended.
func (a *Activity) Running() int {
	return len(slices.DeleteFunc(a.Runs(), ActivityRun.Done))
}

// Foreground reports whether a run not ended is in the foreground: what
// Ctrl+B would move.
func (a *Activity) Foreground() bool {
	return slices.ContainsFunc(a.order, func(r *ActivityRun) bool { return !r.Done() && !r.Background })
}
