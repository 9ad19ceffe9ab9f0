package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
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
	// AgentColor is the agent file's color, for displays.
	AgentColor string
}

// Totals adds up usage and cost by model over a whole run tree. It is safe
// for concurrent use: parallel subagents add to it at once.
type Totals struct {
	mu      sync.Mutex
	byModel map[string]event.ModelUsage
	cost    llm.Cost
	watch   func(cost llm.Cost)
	// running are the figures of turns still going, by turn: only Live
	// counts them, until the turn's Add (Settle).
	running map[*turnKey]spent
}

// turnKey names one running turn in Totals.running. It is not empty:
// pointers to zero-size values may all be equal.
type turnKey struct{ _ byte }

// spent is a running turn's usage and cost soFar.
type spent struct {
	usage llm.Usage
	cost  llm.Cost
}

// progress records a running turn's usage and cost soFar.
func (t *Totals) progress(k *turnKey, u llm.Usage, cost llm.Cost) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == nil {
		t.running = map[*turnKey]spent{}
	}
	t.running[k] = spent{u, cost}
}

// settle forgets a turn's running figures: its Add counts them now.
func (t *Totals) settle(k *turnKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, k)
}

// Live returns the sums soFar with the turns still running, which
// Snapshot, Cost and budgets leave out until each ends: what a display
// shows while a tree works.
func (t *Totals) Live() (usage llm.Usage, cost llm.Cost) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.byModel {
		usage = usage.Add(m.Usage)
	}
	cost = t.cost
	for _, r := range t.running {
		usage = usage.Add(r.usage)
		cost = cost.Add(r.cost)
	}
	return usage, cost
}

// Watch makes every Add call f, outside the lock, with the total cost
// soFar: how a budget is enforced over a whole tree.
func (t *Totals) Watch(f func(cost llm.Cost)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watch = f
}

// Cost is the total cost soFar.
func (t *Totals) Cost() llm.Cost {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cost
}

// Add records one run's usage and cost.
func (t *Totals) Add(model string, u llm.Usage, cost llm.Cost) {
	t.mu.Lock()
	if t.byModel == nil {
		t.byModel = map[string]event.ModelUsage{}
	}
	m := t.byModel[model]
	m.Usage = m.Usage.Add(u)
	m.CostUSD = m.CostUSD.Add(cost)
	t.byModel[model] = m
	t.cost = t.cost.Add(cost)
	watch, total := t.watch, t.cost
	t.mu.Unlock()
	if watch != nil {
		watch(total)
	}
}

// Snapshot returns the sums soFar.
func (t *Totals) Snapshot() (usage llm.Usage, cost llm.Cost, byModel map[string]event.ModelUsage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byModel = make(map[string]event.ModelUsage, len(t.byModel))
	for name, m := range t.byModel {
		byModel[name] = m
		usage = usage.Add(m.Usage)
		cost = cost.Add(m.CostUSD)
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
	Cost func(llm.Usage) llm.Cost
	// Totals, if set, receives this run's usage and cost.
	Totals *Totals
	// PublishPrompt publishes the prompt as a user event (subagents do, as
	// Claude Code does; the main session's prompt is the user's own).
	PublishPrompt bool
	Bus           *event.Bus
	Now           func() time.Time
	// Observe, if set, sees every message after it was recorded (task
	// output files and progress hang off it).
	Observe func(loop.Step)
	// RecordHistory writes the history given to Start into the transcript
	// (unpublished): a fork's session holds the conversation it continues.
	RecordHistory bool
	// Logger receives the run's warnings; the loop's too, unless
	// Loop.Logger is set. nil discards them.
	Logger *slog.Logger
	// Hooks, if set, run when a turn ends (Stop, or SubagentStop for a
	// subagent). The loop's tool hooks are in Loop (see LoopConfig).
	Hooks *Hooks
	// Partial publishes the model's replies as they stream, as stream
	// events in the Anthropic API's shape (--include-partial-messages).
	Partial bool
}

// Result is how a turn (or a whole run) ended.
type Result struct {
	*loop.Outcome
	Cost     llm.Cost
	Duration time.Duration
	Status   session.Status
}

// Conversation is an agent's session kept open across turns: the main
// agent of a headless run answers its prompt, then each task notification,
// in one session.
type Conversation struct {
	spec    Spec
	rec     *recorder
	history []llm.Message
	// measured is the last response's measure of history (loop.Measured):
	// the next turn's compaction check starts from it, not from an
	// estimate of the whole history. Zero until a response measures it,
	// and again whenever history is replaced.
	measured loop.Measured

	turns int
	usage llm.Usage
	cost  llm.Cost
	last  *Result
	err   error // a failure before the first turn (recording the history)
}

// Start opens a conversation on history (the session's earlier messages).
func Start(spec Spec, history []llm.Message) *Conversation {
	if spec.Now == nil {
		spec.Now = time.Now
	}
	c := &Conversation{spec: spec, rec: &recorder{spec: spec}, history: append([]llm.Message(nil), history...)}
	if spec.RecordHistory {
		for _, m := range history {
			if c.err = c.rec.record(loop.Step{Message: m}, false); c.err != nil {
				break
			}
		}
	}
	return c
}

// Record writes messages into the transcript, unpublished, and adds them
// to the history: exchanges that happened outside the loop (a slash
// command's answer).
func (c *Conversation) Record(msgs ...llm.Message) error {
	for _, m := range msgs {
		if err := c.rec.record(loop.Step{Message: m}, false); err != nil {
			return err
		}
		c.history = append(c.history, m)
	}
	return nil
}

// RunTool runs one call of the user's with the turn's configuration
// (loop.Call): the same hooks, permission layer and sandbox as the
// model's calls, without a model call. Nothing is recorded.
func (c *Conversation) RunTool(ctx context.Context, use llm.Block) (result llm.Block, denied bool) {
	cfg := c.spec.Loop
	if cfg.Logger == nil {
		cfg.Logger = c.spec.Logger
	}
	return loop.Call(ctx, cfg, use)
}

// History is the conversation so far. The conversation appends in place
// (loop.Run), so the slice has no room past its end: whoever appends to
// it gets an array of their own.
func (c *Conversation) History() []llm.Message {
	return c.history[:len(c.history):len(c.history)]
}

// Input is one input message of a turn and how it is recorded.
type Input struct {
	Message llm.Message
	// UUID, if set, is the message's transcript id (a caller's own id for
	// it); else a new one.
	UUID string
	// Quiet: the message is recorded but not published — the user's own
	// message, which whoever sent it has already seen.
	Quiet bool
}

// Turn records the input messages and runs the loop until the model stops
// calling tools. It always returns a Result; a failure is in Result.Err.
// The first message of a subagent's first turn is published when
// Spec.PublishPrompt is set; later inputs (notifications, messages) always
// are, since nobody else has shown them.
func (c *Conversation) Turn(ctx context.Context, input ...llm.Message) *Result {
	in := make([]Input, len(input))
	for i, m := range input {
		in[i] = Input{Message: m, Quiet: !c.spec.PublishPrompt && c.turns == 0 && i == 0}
	}
	return c.TurnInput(ctx, in...)
}

// TurnInput is Turn with each input's recording spelled out.
func (c *Conversation) TurnInput(ctx context.Context, input ...Input) *Result {
	start := c.spec.Now()
	key := &turnKey{}
	var out *loop.Outcome
	err := c.err
	if err == nil && len(input) > 0 {
		// One append for them all: a turn answering many notifications
		// waits once for a store that is a round trip away.
		var n int
		n, err = c.rec.recordInputs(input)
		for _, in := range input[:n] {
			c.history = append(c.history, in.Message)
		}
	}
	if err == nil {
		cfg := c.spec.Loop
		if cfg.Logger == nil {
			cfg.Logger = c.spec.Logger
		}
		var soFar llm.Usage
		cfg.OnStep = func(_ context.Context, s loop.Step) error {
			if s.Response != nil && c.spec.Totals != nil {
				// Displays follow the turn as it goes (Totals.Live).
				soFar = soFar.Add(s.Response.Usage)
				c.spec.Totals.progress(key, soFar, c.price(soFar))
			}
			return c.rec.record(s, true)
		}
		if cfg.Inbox != nil {
			cfg.OnInbox = func(_ context.Context, msgs []llm.Message) error {
				in := make([]Input, len(msgs))
				for i, m := range msgs {
					in[i] = Input{Message: m}
				}
				_, err := c.rec.recordInputs(in)
				return err
			}
		}
		// A retry is shown as it waits, partial messages or not: what
		// streamed is void, and a front end counts down to the next try.
		next := cfg.OnStream
		cfg.OnStream = func(ev llm.Event) {
			if ev.Type == llm.EventRetry && ev.Retry != nil {
				c.rec.publishRetry(ev.Retry)
			}
			if next != nil {
				next(ev)
			}
		}
		if c.spec.Partial && cfg.Model != nil {
			p := &partial{model: bareModel(cfg.Model.Name()), emit: c.rec.publishPartial}
			next := cfg.OnStream
			cfg.OnStream = func(ev llm.Event) {
				p.event(ev)
				if next != nil {
					next(ev)
				}
			}
		}
		cfg.Measured = c.measured
		out, _ = loop.Run(ctx, cfg, c.history)
		c.history, c.measured = out.Messages, out.Measured
		// A Stop hook that blocks keeps the agent going, told why.
		for blocks := 0; ; blocks++ {
			more := c.stopFeedback(ctx, out, blocks)
			if more == nil {
				break
			}
			if err := c.rec.record(loop.Step{Message: *more}, true); err != nil {
				out.Subtype, out.Err = loop.SubtypeExecution, err
				break
			}
			c.history = append(c.history, *more)
			if cfg.MaxTurns > 0 {
				cfg.MaxTurns = max(cfg.MaxTurns-out.Turns, 1)
			}
			cfg.Measured = c.measured
			next, _ := loop.Run(ctx, cfg, c.history)
			c.history, c.measured = next.Messages, next.Measured
			out = merge(out, next)
		}
	}
	if out == nil {
		out = &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err, Messages: c.history}
	}
	res := &Result{Outcome: out, Duration: c.spec.Now().Sub(start), Status: session.StatusCompleted}
	if c.spec.Cost != nil {
		res.Cost = c.spec.Cost(out.Usage)
	}
	if c.spec.Totals != nil {
		c.spec.Totals.settle(key)
	}
	if c.spec.Totals != nil && c.spec.Loop.Model != nil {
		c.spec.Totals.Add(c.spec.Loop.Model.Name(), out.Usage, res.Cost)
	}
	switch {
	case errors.Is(out.Err, context.Canceled) || errors.Is(out.Err, context.DeadlineExceeded):
		res.Status = session.StatusKilled
	case out.Err != nil:
		res.Status = session.StatusFailed
	}
	c.turns += out.Turns
	c.usage = c.usage.Add(out.Usage)
	c.cost = c.cost.Add(res.Cost)
	c.last = res
	return res
}

// price prices u as the run's Cost does ($0 without one).
func (c *Conversation) price(u llm.Usage) llm.Cost {
	if c.spec.Cost == nil {
		return llm.Cost{}
	}
	return c.spec.Cost(u)
}

// merge adds a continuation's figures to the turn's outcome.
func merge(first, next *loop.Outcome) *loop.Outcome {
	next.Turns += first.Turns
	next.ToolUses += first.ToolUses
	next.Usage = first.Usage.Add(next.Usage)
	next.APIDuration += first.APIDuration
	next.Denials = append(append([]loop.Denial(nil), first.Denials...), next.Denials...)
	next.Warnings = append(append([]string(nil), first.Warnings...), next.Warnings...)
	return next
}

// Close finishes the session with status (the last turn's when empty),
// recording the conversation's usage, cost and turns. The session's record
// must be saved even when the run's context is cancelled, so Close takes
// none.
func (c *Conversation) Close(status session.Status) error {
	if status == "" {
		status = session.StatusCompleted
		if c.last != nil {
			status = c.last.Status
		}
	}
	return c.spec.Session.Finish(context.Background(), status, c.usage, c.cost, c.turns)
}

// Run runs one turn on history plus prompt and finishes the session.
func Run(ctx context.Context, spec Spec, history []llm.Message, prompt llm.Message) *Result {
	c := Start(spec, history)
	res := c.Turn(ctx, prompt)
	if err := c.Close(""); err != nil {
		if res.Err == nil {
			res.Subtype = loop.SubtypeExecution
		}
		res.Err = errors.Join(res.Err, err)
	}
	return res
}

type recorder struct {
	spec Spec
}

// record appends a message to the transcript, then publishes it under the
// same uuid. The transcript comes first: what was shown was also saved.
func (r *recorder) record(s loop.Step, publish bool) error {
	return r.recordAs(s, "", publish)
}

// recordAs is record under the given uuid ("" for a new one).
func (r *recorder) recordAs(s loop.Step, id string, publish bool) error {
	entry, ev, err := r.prepare(s, id)
	if err != nil {
		return err
	}
	if err := r.spec.Session.Append(entry); err != nil {
		return err
	}
	r.recorded(s, ev, publish)
	return nil
}

// recordInputs records a turn's input messages as record does each, in
// one append to the transcript (Session.AppendAll), and publishes those
// written. It returns how many were.
func (r *recorder) recordInputs(input []Input) (int, error) {
	entries := make([]session.Entry, len(input))
	evs := make([]event.Event, len(input))
	for i, in := range input {
		var err error
		if entries[i], evs[i], err = r.prepare(loop.Step{Message: in.Message}, in.UUID); err != nil {
			return 0, err
		}
	}
	n, err := r.spec.Session.AppendAll(entries)
	for i := range n {
		r.recorded(loop.Step{Message: input[i].Message}, evs[i], !input[i].Quiet)
	}
	return n, err
}

// recorded publishes ev (if publish) and observes s, once s is written.
func (r *recorder) recorded(s loop.Step, ev event.Event, publish bool) {
	if publish && r.spec.Bus != nil {
		r.spec.Bus.Publish(ev)
	}
	if r.spec.Observe != nil {
		r.spec.Observe(s)
	}
}

// prepare is s's transcript entry and event under uuid id ("" for a new
// one).
func (r *recorder) prepare(s loop.Step, id string) (session.Entry, event.Event, error) {
	if id == "" {
		id = ids.New()
	}
	entry := session.Entry{Type: string(s.Message.Role), UUID: id, Message: &s.Message}
	t := r.spec.Tag
	ev := event.Event{
		UUID: id, Message: &s.Message, SessionID: t.RootSessionID, Time: r.spec.Now(),
		ParentToolUseID: t.ParentToolUseID, AgentID: t.AgentID, AgentType: t.AgentType, TaskDescription: t.TaskDescription, AgentColor: t.AgentColor,
	}
	for _, d := range s.Denials {
		if d.Unasked != "" {
			ev.Refused = append(ev.Refused, event.Refusal{ToolName: d.Tool, ToolUseID: d.ToolUseID, ReasonType: d.Unasked, Message: d.Message})
		}
	}
	switch {
	case s.Compaction:
		trigger := "auto"
		if s.Manual {
			trigger = "manual"
		}
		data, err := json.Marshal(session.CompactBoundary{Trigger: trigger, PreTokens: s.PreTokens, Kept: s.Kept})
		if err != nil {
			return entry, ev, fmt.Errorf("record the compact boundary: %w", err)
		}
		entry.Type, entry.Subtype, entry.Data = session.EntrySummary, session.SubtypeCompactBoundary, data
		// Claude Code's shape; the summary itself rides along for Go
		// consumers (stream-json leaves it out, as Claude Code does).
		ev.Type, ev.Subtype = event.TypeSystem, session.SubtypeCompactBoundary
		ev.Compact = &event.Compact{Trigger: trigger, PreTokens: s.PreTokens}
	case s.Response != nil:
		entry.MessageID, entry.Model, entry.StopReason = s.Response.ID, s.Response.Model, string(s.Response.StopReason)
		u := s.Response.Usage
		entry.Usage = &u
		ev.Type = event.TypeAssistant
		ev.Assistant = &event.Assistant{MessageID: s.Response.ID, Model: s.Response.Model, StopReason: s.Response.StopReason, Usage: u}
	default:
		ev.Type = event.TypeUser
		if len(s.Inputs) > 0 {
			// What ran, where the approver changed what the model asked.
			data, err := json.Marshal(map[string]any{"inputs": s.Inputs})
			if err != nil {
				return entry, ev, fmt.Errorf("record the changed tool inputs: %w", err)
			}
			entry.Data = data
		}
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
	return entry, ev, nil
}

// publishRetry publishes a model call about to be retried, in Claude
// Code's api_retry shape: attempt counts the retries (1 for the first),
// error is its error kind. It is not recorded: the transcript keeps what
// was said, not how often it was asked.
func (r *recorder) publishRetry(rt *llm.Retry) {
	if r.spec.Bus == nil {
		return
	}
	status, kind := 0, "unknown" // status 0: no HTTP response
	var e *llm.Error
	if errors.As(rt.Err, &e) {
		status, kind = e.Status, retryKind(e.Kind)
	}
	t := r.spec.Tag
	r.spec.Bus.Publish(event.Event{
		Type: event.TypeSystem, Subtype: event.SubtypeAPIRetry, UUID: ids.New(), SessionID: t.RootSessionID, Time: r.spec.Now(),
		ParentToolUseID: t.ParentToolUseID, AgentID: t.AgentID, AgentType: t.AgentType, TaskDescription: t.TaskDescription, AgentColor: t.AgentColor,
		Retry: &event.Retry{
			Attempt: rt.Attempt - 1, MaxRetries: rt.MaxAttempts - 1, Delay: rt.Delay.Truncate(time.Millisecond),
			Status: status, Kind: kind, Message: rt.Err.Error(),
		},
	})
}

// retryKind names an error kind as Claude Code's api_retry does.
func retryKind(k llm.ErrorKind) string {
	switch k {
	case llm.ErrRateLimit:
		return "rate_limit"
	case llm.ErrOverloaded:
		return "overloaded"
	case llm.ErrServer, llm.ErrStreamCut, llm.ErrTimeout:
		return "server_error"
	case llm.ErrAuth:
		return "authentication_failed"
	case llm.ErrBadRequest:
		return "invalid_request"
	}
	return "unknown"
}

// publishPartial publishes one streaming event of a reply in progress;
// it is not recorded: the complete message is, when it ends.
func (r *recorder) publishPartial(payload map[string]any) {
	if r.spec.Bus == nil {
		return
	}
	t := r.spec.Tag
	r.spec.Bus.Publish(event.Event{
		Type: event.TypeStreamEvent, UUID: ids.New(), SessionID: t.RootSessionID, Time: r.spec.Now(),
		ParentToolUseID: t.ParentToolUseID, AgentID: t.AgentID, AgentType: t.AgentType, TaskDescription: t.TaskDescription, AgentColor: t.AgentColor,
		Partial: payload,
	})
}

// RunForked asks the model one more question about a conversation, without
// running tools (S-F3): the runtime's own services — context compaction,
// progress summaries of background tasks — reuse a conversation this way.
// base is the conversation's request as it would be sent, so the question
// shares its prefix (and a provider's prompt cache); the answer's text is
// the result. Tool calls in the answer are ignored.
func RunForked(ctx context.Context, model llm.Model, base llm.Request, directive string) (string, llm.Usage, error) {
	req := base
	req.Messages = append([]llm.Message(nil), base.Messages...)
	ask := llm.Text(directive)
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleUser {
		// Two user messages in a row: join them, as providers expect turns
		// to alternate.
		last := req.Messages[n-1]
		last.Content = append(append([]llm.Block(nil), last.Content...), ask)
		req.Messages[n-1] = last
	} else {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{ask}})
	}
	resp, err := llm.Collect(model.Stream(ctx, &req))
	if err != nil {
		return "", llm.Usage{}, fmt.Errorf("forked run: %w", err)
	}
	return strings.TrimSpace(resp.Message.Text()), resp.Usage, nil
}

// Compactor is the loop's compaction hook for a conversation (S-F3): when
// its context passes the configured share of the window, older turns are
// summarised by a forked run that shares the conversation's prompt and
// tools, and replaced by the summary.
//
// The summary call's usage goes to spent (nil: nowhere), so that it counts
// in the run's totals.
func Compactor(c compact.Config, model llm.Model, system string, tools []llm.ToolSpec, agent string, spent func(llm.Usage)) func(context.Context, []llm.Message, llm.Usage) ([]llm.Message, *llm.Message, error) {
	return compactor(c, model, system, tools, agent, spent, nil)
}

// compactor is Compactor with a check that runs before each summary
// (the PreCompact hooks); its error stops that compaction.
func compactor(c compact.Config, model llm.Model, system string, tools []llm.ToolSpec, agent string, spent func(llm.Usage), before func(context.Context) error) func(context.Context, []llm.Message, llm.Usage) ([]llm.Message, *llm.Message, error) {
	return compact.Hook(c, func(ctx context.Context, older []llm.Message) (string, error) {
		if before != nil {
			if err := before(ctx); err != nil {
				return "", err
			}
		}
		text, u, err := RunForked(ctx, model, llm.Request{System: system, Messages: older, Tools: tools, Agent: agent + ":compact"}, compact.Instructions())
		if spent != nil {
			spent(u)
		}
		return text, err
	})
}
