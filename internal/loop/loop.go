package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Permitter decides whether a tool call may run. t is nil when the model
// called a tool that is not in its pool. A non-nil error is the denial; its
// text goes to the model. Otherwise it returns the input to run: input, or
// what the approver changed it to, which the loop validates again and the
// transcript shows (Step.Inputs).
//
// A denial that implements Interrupts() bool and reports true ends the
// turn once the tool results are recorded (an approver's "deny and stop").
type Permitter interface {
	PermitInput(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage) (json.RawMessage, error)
}

// ErrInterrupted is wrapped by Outcome.Err when a permission decision
// ended the turn.
var ErrInterrupted = errors.New("interrupted by a permission decision")

// ReadFilterer is a Permitter that also decides which files a permitted
// call may show in a search or listing: the loop puts its answer in the
// call's Env.Readable.
type ReadFilterer interface {
	ReadFilter(name string, t tool.Tool, env tool.Env) func(path string) bool
}

// ToolHooks are asked around every call of a tool in the pool: the
// runtime's PreToolUse and PostToolUse hooks.
type ToolHooks interface {
	// BeforeTool sees a call whose input the tool's schema accepted,
	// before the permission layer decides it.
	BeforeTool(ctx context.Context, env tool.Env, name string, input json.RawMessage) BeforeTool
	// AfterTool sees a call that ran: response is the tool's structured
	// result (its Meta) or, when it has none, its text.
	AfterTool(ctx context.Context, env tool.Env, name string, input, response json.RawMessage) AfterTool
}

// BeforeTool is what the hooks decided about a call before it runs.
type BeforeTool struct {
	// Deny refuses the call; Reason goes to the model.
	Deny   bool
	Reason string
	// Verdict "allow" approves the call without asking (deny rules still
	// refuse it), "ask" asks whatever the rules say; the Permitter must be
	// a HookPermitter for either to count.
	Verdict string
	// Input, if set, replaces the call's input; it is checked against the
	// tool's schema and the permission layer as the model's was.
	Input json.RawMessage
	// Context is added to the call's result, for the model.
	Context string
	// Stop ends the run after this batch of calls.
	Stop bool
}

// AfterTool is what the hooks said about a call that ran.
type AfterTool struct {
	// Context is added to the call's result, for the model.
	Context string
	// Stop ends the run after this batch of calls.
	Stop bool
}

// HookPermitter is a Permitter that can take a hook's verdict into
// account: "allow" skips asking, "ask" asks where the rules would allow.
type HookPermitter interface {
	PermitVerdict(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage, verdict, reason string) (json.RawMessage, error)
}

// Step is a message the loop produced: the model's reply, or the user
// message carrying tool results.
type Step struct {
	Message llm.Message
	// Response is set for assistant messages.
	Response *llm.Response
	// ToolMeta holds the structured detail (tool.Result.Meta) of each
	// tool_result in Message, keyed by tool_use id.
	ToolMeta map[string]any
	// Denials lists the calls in Message that the permission layer refused.
	Denials []Denial
	// Inputs holds, by tool_use id, the input a call ran with when a hook
	// or its approver changed the model's (the assistant message keeps
	// what the model asked for).
	Inputs map[string]json.RawMessage

	// Compaction marks a summary (Message) that replaced the older messages
	// of the history; Kept are the messages kept verbatim after it, and
	// PreTokens the size of the context that triggered it.
	Compaction bool
	Kept       []llm.Message
	PreTokens  int64
	// Manual marks a compaction the user asked for (/compact), not one
	// the context's size triggered.
	Manual bool
}

// Denial is a refused tool call.
type Denial struct {
	ToolUseID, Tool string
	Input           json.RawMessage
	// Message is the refusal as the model got it.
	Message string
	// Unasked is what refused the call before anyone was asked ("rule",
	// "mode", "other"), or "" when an approver refused it.
	Unasked string
}

// Config is one run of the loop.
type Config struct {
	Model  llm.Model
	System string
	// SystemContext, if set, is called before every model call: per-turn
	// context such as the agents one may delegate to and the state of
	// background tasks. Its text goes to the model in a <system-reminder>
	// at the end of the newest user message, for that call only (never
	// recorded): System, the tools and the conversation stay the same from
	// call to call, so the prompt cache keeps serving them.
	//
	// It takes the run's context: what it reads (the task store) should
	// end with the run.
	SystemContext func(context.Context) string
	// Preamble, if set, is put before the conversation on every model
	// call, at the start of the first user message, and never recorded:
	// context that holds for the whole session (the project's CLAUDE.md
	// and AGENTS.md), where Claude Code puts it. At the front and the same
	// on every call, it stays inside the provider's cached prefix.
	Preamble []llm.Block
	Tools    *tool.Set
	Permit   Permitter // nil allows every call
	// Hooks, if set, are asked around every tool call.
	Hooks    ToolHooks
	MaxTurns int // model calls allowed; 0 means no limit
	// MaxToolInputBytes bounds the JSON input of one tool call; a larger
	// one is refused before it is decoded. 0 means
	// DefaultMaxToolInputBytes.
	MaxToolInputBytes int64
	// Agent names the agent for the model request ("main" for main sessions).
	Agent     string
	MaxTokens int64
	Thinking  *llm.Thinking
	// Temperature, if set, is sent with every call (an agent file's
	// temperature).
	Temperature *float64
	Env         tool.Env

	// OnStep is called with every message as it is produced, in order,
	// before the loop goes on; it records the transcript and publishes
	// progress. An error stops the run: a transcript that cannot be written
	// must not be silently skipped.
	OnStep func(ctx context.Context, s Step) error
	// OnEnd, if set, is called when the model ends its turn without tool
	// calls; a message it returns joins the conversation as a user message
	// and the loop goes on (within MaxTurns): the reminder to give the
	// structured output.
	OnEnd func() *llm.Message
	// OnStream, if set, sees the model's streaming events (text deltas,
	// retries) for live display. It must not block.
	OnStream func(ev llm.Event)
	// Inbox, if set, is drained at every loop boundary (before each model
	// call after the first); its messages join the conversation as user
	// messages and are passed to OnStep. This is how messages reach a
	// running agent without interrupting a tool call.
	Inbox func() []llm.Message
	// OnInbox, if set, records one boundary's inbox messages in one call
	// instead of OnStep for each (a store a round trip away writes them
	// at once); an error stops the run as OnStep's does.
	OnInbox func(ctx context.Context, msgs []llm.Message) error
	// Compact, if set, is called at every loop boundary after the inbox,
	// with the history and the size of the context it makes (see
	// Measured.Context: what the last response measured, plus an estimate
	// of the messages added since); it must not modify msgs. It is called
	// before the first call too, when the history is more than the
	// message to answer. When it returns a summary, newMsgs (the summary
	// first, then the messages kept verbatim) replaces the history and
	// the summary is passed to OnStep as a Compaction step. A failure is
	// not fatal: the run goes on with the full history and the error
	// becomes a warning.
	Compact func(ctx context.Context, msgs []llm.Message, size llm.Usage) (newMsgs []llm.Message, summary *llm.Message, err error)
	// Measured is what a response of an earlier run measured of the
	// history passed to Run (that run's Outcome.Measured, the history
	// being its Outcome.Messages plus what was added since). Without it
	// (the zero value: a resumed or forked history) the first compaction
	// check estimates the whole history; with it, only the messages added
	// after what was measured, so that a conversation answering its
	// notifications turn after turn is sized by the model's own count.
	Measured Measured
	// Logger receives the failures the run survives (a failed
	// compaction), as warnings; nil discards them.
	Logger *slog.Logger
	// Tracer makes a span of every model call (chat) and tool call
	// (execute_tool), children of the span in the run's context; the zero
	// Tracer makes none.
	Tracer telemetry.Tracer

	interrupt context.CancelCauseFunc // set by runTools: a denial ends the turn
}

// Outcome is how a run ended.
type Outcome struct {
	// Subtype is "success", "error_max_turns" or "error_during_execution".
	Subtype string
	// Result is the text of the last assistant message.
	Result string
	// Messages is the whole conversation, the history passed in included;
	// after a compaction, the compacted history.
	Messages    []llm.Message
	Turns       int
	ToolUses    int
	Usage       llm.Usage
	APIDuration time.Duration
	StopReason  llm.StopReason
	Denials     []Denial
	// Err is why the run failed (nil on success and on error_max_turns).
	Err error
	// Warnings are failures the run survived, such as a compaction that
	// could not be done.
	Warnings []string
	// HookStopped is set when a tool hook ended the run (continue: false).
	HookStopped bool
	// Measured is the last measure of Messages: the newest response's
	// usage and the messages it covered; Config.Measured when the run
	// made no call; zero when nothing measured Messages as they are (a
	// compaction replaced them since). A conversation that goes on
	// passes it to its next run's Config.Measured.
	Measured Measured
}

// Measured is a model response's count of a conversation: Usage is the
// response's usage, whose input (cached or not) and output tokens are the
// context of the first Through messages of the history — those the
// request held and the response's own assistant message. The zero value
// measures nothing.
//
// It holds only while those messages stay where they are: whoever
// replaces the history (a compaction) drops it.
type Measured struct {
	Usage   llm.Usage
	Through int
}

// Context returns the size of the context msgs make: the measured figure
// plus an estimate (about four characters a token) of the messages after
// the ones measured — tool results, notifications, messages sent in. A
// provider's count is the authority (JSON-heavy content is far from four
// characters a token), so only what it has not seen is estimated; with
// nothing measured, or a measure of more messages than msgs holds (not a
// measure of msgs), the whole of msgs is estimated.
func (m Measured) Context(msgs []llm.Message) llm.Usage {
	if m.Through <= 0 || m.Through > len(msgs) {
		return Estimate(msgs)
	}
	u := m.Usage
	u.InputTokens += Estimate(msgs[m.Through:]).InputTokens
	return u
}

// DefaultMaxToolInputBytes bounds a tool call's input when
// Config.MaxToolInputBytes is 0. A model cannot write more than its output
// tokens allow (128,000 tokens is under 1 MiB), so a larger input is a
// broken or hostile reply, not work.
const DefaultMaxToolInputBytes = 1 << 20

const (
	SubtypeSuccess   = "success"
	SubtypeMaxTurns  = "error_max_turns"
	SubtypeExecution = "error_during_execution"
	// SubtypeMaxBudget is set by the runtime, not the loop: a run stopped
	// because its cost reached its budget.
	SubtypeMaxBudget = "error_max_budget_usd"
)

// Run runs the loop on history, which must end with the user message to
// answer (already passed through OnStep by the caller). It always returns
// an Outcome; Outcome.Err is also returned as the error.
//
// Outcome.Messages is history with the turn's messages appended, in the
// room history's array has past its length when there is some: a
// conversation answering notifications runs the loop once per batch, and
// copying its whole history each time made 10,000 children quadratic. The
// caller owns that room; to keep it, pass history[:n:n].
func Run(ctx context.Context, cfg Config, history []llm.Message) (*Outcome, error) {
	out := &Outcome{Messages: history, Measured: cfg.Measured}
	if out.Measured.Through > len(history) {
		out.Measured = Measured{} // not a measure of this history
	}
	fail := func(err error) (*Outcome, error) {
		out.Subtype, out.Err = SubtypeExecution, err
		return out, err
	}
	for {
		if cfg.Inbox != nil && out.Turns > 0 {
			msgs := cfg.Inbox()
			if cfg.OnInbox != nil && len(msgs) > 0 {
				if err := cfg.OnInbox(ctx, msgs); err != nil {
					return fail(fmt.Errorf("recording %d queued messages: %w", len(msgs), err))
				}
				out.Messages = append(out.Messages, msgs...)
				msgs = nil
			}
			for _, m := range msgs {
				if err := step(ctx, cfg, Step{Message: m}); err != nil {
					return fail(err)
				}
				out.Messages = append(out.Messages, m)
			}
		}
		// A conversation that arrives long — resumed, or answering a
		// notification after many turns — may need compacting before its
		// first call too.
		if cfg.Compact != nil && (out.Turns > 0 || len(history) > 1) {
			if err := compact(ctx, cfg, out); err != nil {
				return fail(err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		forkable, resp, took, err := call(ctx, cfg, out.Messages)
		out.APIDuration += took
		if err != nil {
			return fail(err)
		}
		out.Turns++
		out.Usage = out.Usage.Add(resp.Usage)
		out.StopReason = resp.StopReason
		resp.Message.Role = llm.RoleAssistant
		out.Messages = append(out.Messages, resp.Message)
		out.Measured = Measured{Usage: resp.Usage, Through: len(out.Messages)}
		out.Result = resp.Message.Text()
		if err := step(ctx, cfg, Step{Message: resp.Message, Response: resp}); err != nil {
			return fail(err)
		}
		uses := resp.Message.ToolUses()
		if len(uses) == 0 {
			if m := onEnd(cfg); m != nil && (cfg.MaxTurns == 0 || out.Turns < cfg.MaxTurns) {
				// Told to go on (structured output not given yet).
				if err := step(ctx, cfg, Step{Message: *m}); err != nil {
					return fail(err)
				}
				out.Messages = append(out.Messages, *m)
				continue
			}
			out.Subtype = SubtypeSuccess
			return out, nil
		}
		out.ToolUses += len(uses)
		// Tools see the turn they answer: a fork reuses the request and the
		// reply byte for byte.
		turnCfg := cfg
		turnCfg.Env.Turn = &tool.Turn{Request: forkable(), Reply: resp.Message, Tools: cfg.Tools}
		results, stop, interrupted := runTools(ctx, turnCfg, uses)
		if len(results.Inputs) > 0 {
			// The model sees from now on what ran, not what it asked for.
			out.Messages[len(out.Messages)-1] = withInputs(resp.Message, results.Inputs)
		}
		out.Messages = append(out.Messages, results.Message)
		out.Denials = append(out.Denials, results.Denials...)
		if err := step(ctx, cfg, results); err != nil {
			return fail(err)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if interrupted != nil {
			return fail(interrupted)
		}
		if stop {
			out.Subtype, out.HookStopped = SubtypeSuccess, true
			return out, nil
		}
		if cfg.MaxTurns > 0 && out.Turns >= cfg.MaxTurns {
			out.Subtype = SubtypeMaxTurns
			return out, nil
		}
	}
}

func onEnd(cfg Config) *llm.Message {
	if cfg.OnEnd == nil {
		return nil
	}
	return cfg.OnEnd()
}

func step(ctx context.Context, cfg Config, s Step) error {
	if cfg.OnStep == nil {
		return nil
	}
	if err := cfg.OnStep(ctx, s); err != nil {
		if s.Compaction {
			return fmt.Errorf("recording the context summary: %w", err)
		}
		return fmt.Errorf("recording %s message: %w", s.Message.Role, err)
	}
	return nil
}

// compact lets cfg.Compact replace out's history by a summary and the
// messages it keeps. Only a failure to record the summary is returned: a
// failed compaction leaves the history whole and becomes a warning.
func compact(ctx context.Context, cfg Config, out *Outcome) error {
	size := out.Measured.Context(out.Messages)
	msgs, summary, err := cfg.Compact(ctx, out.Messages, size)
	if err == nil && summary != nil && (len(msgs) == 0 || !reflect.DeepEqual(msgs[0], *summary)) {
		err = errors.New("the compacted history does not start with its summary")
	}
	switch {
	case err != nil && ctx.Err() == nil:
		out.Warnings = append(out.Warnings, fmt.Sprintf("context compaction failed, going on with the full history: %v", err))
		if cfg.Logger != nil {
			cfg.Logger.WarnContext(ctx, "context compaction failed; going on with the full history", "agent", cfg.Agent, "session_id", cfg.Env.SessionID, "err", err)
		}
		return nil
	case err != nil || summary == nil:
		return nil
	}
	s := Step{Message: *summary, Compaction: true, Kept: msgs[1:], PreTokens: size.Total()}
	if err := step(ctx, cfg, s); err != nil {
		return err
	}
	out.Messages = append([]llm.Message(nil), msgs...)
	// The measure was of the messages replaced; the next response measures
	// the new history.
	out.Measured = Measured{}
	return nil
}

// call makes one model call. forkable builds what a fork of this turn
// starts from: the request as sent, per-turn context included (still
// marked PerTurn), so that a fork's first request repeats the parent's
// byte for byte; only the preamble is left out, because the fork's loop
// puts its own (the same blocks) in front again. It is built only when
// asked (a turn that runs tools): building it copies the history.
func call(ctx context.Context, cfg Config, msgs []llm.Message) (forkable func() *llm.Request, _ *llm.Response, _ time.Duration, _ error) {
	req := &llm.Request{
		System:    cfg.System,
		Messages:  msgs,
		Tools:     cfg.Tools.Specs(),
		MaxTokens: cfg.MaxTokens,
		Thinking:  cfg.Thinking,
		Agent:     cfg.Agent,
		// The agent's own; nil leaves the model's default.
		Temperature: cfg.Temperature,
	}
	var extra string
	if cfg.SystemContext != nil {
		extra = cfg.SystemContext(ctx)
	}
	sent := req
	if len(cfg.Preamble) > 0 || extra != "" {
		r := *req
		r.Messages = decorate(msgs, cfg.Preamble, extra)
		sent = &r
	}
	forkable = func() *llm.Request {
		switch {
		case extra == "":
			return req
		case len(cfg.Preamble) == 0:
			return sent // the same messages: nothing was put in front
		}
		f := *req
		f.Messages = decorate(msgs, nil, extra)
		return &f
	}
	var span telemetry.Span
	if cfg.Tracer.Enabled() { // else not even the model's name is asked
		ctx, span = cfg.Tracer.StartChat(ctx, telemetry.Chat{
			Model: cfg.Model.Name(), Agent: cfg.Agent, SessionID: cfg.Env.SessionID,
			MaxTokens: sent.MaxTokens, Temperature: sent.Temperature,
		})
	}
	start := time.Now()
	resp, err := stream(ctx, cfg, sent)
	span.EndChat(resp, err)
	return forkable, resp, time.Since(start), err
}

// stream sends req and returns the model's complete reply.
func stream(ctx context.Context, cfg Config, req *llm.Request) (*llm.Response, error) {
	var resp *llm.Response
	for ev, err := range cfg.Model.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Type == llm.EventDone {
			resp = ev.Response
		}
		if cfg.OnStream != nil {
			cfg.OnStream(ev)
		}
	}
	if resp == nil {
		return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "model stream ended without a complete message"}
	}
	return resp, nil
}

// decorate returns msgs as a request carries them, in one copy: with
// blocks (the preamble) at the start of the first message when it is the
// user's, else in a user message of their own before it; and with text
// (per-turn context), if any, as a <system-reminder> block at the end of
// the newest user message, as Claude Code places per-turn context: after
// everything a provider caches, so the cached prefix does not move. msgs
// itself is left as it was.
func decorate(msgs []llm.Message, blocks []llm.Block, text string) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+2)
	switch {
	case len(blocks) == 0:
		out = append(out, msgs...)
	case len(msgs) > 0 && msgs[0].Role == llm.RoleUser:
		out = append(out, msgs...)
		out[0].Content = append(slices.Clone(blocks), out[0].Content...)
	default:
		out = append(out, llm.Message{Role: llm.RoleUser, Content: slices.Clone(blocks)})
		out = append(out, msgs...)
	}
	if text == "" {
		return out
	}
	block := llm.Block{Type: llm.BlockText, Text: "<system-reminder>\n" + text + "\n</system-reminder>", PerTurn: true}
	if n := len(out); n > 0 && out[n-1].Role == llm.RoleUser {
		c := out[n-1].Content
		out[n-1].Content = append(c[:len(c):len(c)], block)
		return out
	}
	return append(out, llm.Message{Role: llm.RoleUser, Content: []llm.Block{block}})
}

type callResult struct {
	block  llm.Block
	meta   any
	denied bool
	// message and unasked: a denial's text, and what refused the call
	// before anyone was asked (Denial).
	message, unasked string
	stop             bool            // a hook asked to end the run
	input            json.RawMessage // the input it ran with, when a hook or the approver changed it
}

// withInputs returns m with the inputs of the tool calls named in inputs
// replaced.
func withInputs(m llm.Message, inputs map[string]json.RawMessage) llm.Message {
	m.Content = slices.Clone(m.Content)
	for i, b := range m.Content {
		if in, ok := inputs[b.ID]; ok && b.Type == llm.BlockToolUse {
			m.Content[i].Input = in
		}
	}
	return m
}

// unaskedDenial is a denial decided before anyone was asked.
type unaskedDenial interface {
	error
	Unasked() (reasonType string, unasked bool)
}

// interrupter is a denial that ends the turn.
type interrupter interface {
	error
	Interrupts() bool
}

// runTools runs the calls of one assistant message: consecutive
// concurrency-safe calls as one parallel batch, every other call alone.
// stop reports that a hook asked to end the run; interrupted, that a
// denial ended the turn (the calls not yet started did not run).
func runTools(ctx context.Context, cfg Config, uses []llm.Block) (s Step, stop bool, interrupted error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cfg.interrupt = cancel
	results := make([]callResult, len(uses))
	for i := 0; i < len(uses); {
		j := i + 1
		if safe(cfg.Tools, uses[i].Name) {
			for j < len(uses) && safe(cfg.Tools, uses[j].Name) {
				j++
			}
		}
		if j-i == 1 {
			results[i] = runOne(ctx, &cfg, uses[i])
		} else {
			runBatch(ctx, &cfg, uses[i:j], results[i:j])
		}
		i = j
	}
	s = Step{Message: llm.Message{Role: llm.RoleUser}, ToolMeta: map[string]any{}}
	for i, r := range results {
		stop = stop || r.stop
		s.Message.Content = append(s.Message.Content, r.block)
		if r.meta != nil {
			s.ToolMeta[uses[i].ID] = r.meta
		}
		if r.denied {
			s.Denials = append(s.Denials, Denial{ToolUseID: uses[i].ID, Tool: uses[i].Name, Input: uses[i].Input, Message: r.message, Unasked: r.unasked})
		}
		if r.input != nil {
			if s.Inputs == nil {
				s.Inputs = map[string]json.RawMessage{}
			}
			s.Inputs[uses[i].ID] = r.input
		}
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrInterrupted) {
		interrupted = cause
	}
	return s, stop, interrupted
}

// maxParallelCalls is how many calls of one parallel batch run at once.
// A call that waits for something other than the machine (a subagent, a
// person) gives its place up (tool.Yield). Unbounded, a message of 10,000
// background Agent calls held 10,000 goroutines at once, each with a
// 32 KB stack: 316 MB, more than the whole heap.
const maxParallelCalls = 64

// runBatch runs a batch of concurrency-safe calls, maxParallelCalls at a
// time, each result in its place. The background runs its calls launch
// start once every call that may launch one (an AccessAgent tool's) has
// returned or yielded (tool.Launches).
func runBatch(ctx context.Context, cfg *Config, uses []llm.Block, results []callResult) {
	launching, n := make([]bool, len(uses)), 0
	for k, u := range uses {
		if launches(cfg.Tools, u.Name) {
			launching[k] = true
			n++
		}
	}
	var gate *tool.Launches
	if n > 0 {
		gate = tool.NewLaunches(n)
		defer gate.Open()
		ctx = tool.WithLaunches(ctx, gate)
	}
	places := make(chan struct{}, maxParallelCalls)
	var wg sync.WaitGroup
	for k := range uses {
		places <- struct{}{}
		release := sync.OnceFunc(func() {
			<-places
			if launching[k] {
				gate.Settle()
			}
		})
		wg.Go(func() {
			defer release()
			results[k] = runOne(tool.WithYield(ctx, release), cfg, uses[k])
		})
	}
	wg.Wait()
}

func safe(set *tool.Set, name string) bool {
	t, ok := set.Get(name)
	return ok && t.Info().ConcurrencySafe
}

// launches reports whether the tool may launch subagents.
func launches(set *tool.Set, name string) bool {
	t, ok := set.Get(name)
	return ok && t.Info().Access == tool.AccessAgent
}

// Call runs one tool call as a turn runs a model's: the input checks, the
// PreToolUse hooks, the permission layer, the tool in cfg.Env (its
// sandbox) and the PostToolUse hooks, inside its execute_tool span. A
// user's own call (the TUI's "!command") goes through it, so that it
// passes the same gates as the model's; denied reports a refusal by a
// hook or the permission layer.
func Call(ctx context.Context, cfg Config, use llm.Block) (result llm.Block, denied bool) {
	res := runOne(ctx, &cfg, use)
	return res.block, res.denied
}

// runOne runs one call inside its execute_tool span: the hooks, the
// permission layer and the tool (a spawned subagent's run among its work)
// see the span in ctx.
func runOne(ctx context.Context, cfg *Config, use llm.Block) callResult {
	ctx, span := cfg.Tracer.StartTool(ctx, telemetry.Tool{Name: use.Name, CallID: use.ID, Agent: cfg.Agent, SessionID: cfg.Env.SessionID})
	res := callOne(ctx, cfg, use)
	switch {
	case res.denied:
		span.EndTool(telemetry.ToolDenied)
	case res.block.IsError:
		span.EndTool(telemetry.ToolFailed)
	default:
		span.EndTool("")
	}
	return res
}

func callOne(ctx context.Context, cfg *Config, use llm.Block) callResult {
	// Three steps, so that the frames below which the tool runs stay
	// small: a message's hundreds of parallel Agent calls each hold a
	// goroutine stack as deep as its deepest chain of frames, and a chain
	// under 16 KB keeps each stack at 16 KB rather than 32.
	c, res := admit(ctx, cfg, use)
	if c == nil {
		return res
	}
	c.invoke(ctx)
	return c.result(ctx, cfg, use)
}

// admitted is a call that passed every check, ready to run, and then
// what the tool returned.
type admitted struct {
	tool   tool.Tool
	env    tool.Env
	input  json.RawMessage
	hooked bool       // a PreToolUse hook ran: before applies to the result
	before BeforeTool // what it said

	r     tool.Result
	err   error
	crash string // the panic in the tool, with its stack
}

// errResult is a failed call's result for the model.
func errResult(use llm.Block, format string, args ...any) callResult {
	return callResult{block: llm.ToolResult(use.ID, fmt.Sprintf(format, args...), true)}
}

// admit checks a call before it runs — the input's size and schema, the
// PreToolUse hooks, the permission layer — and returns it ready to run, or
// the result that ends it (nil).
func admit(ctx context.Context, cfg *Config, use llm.Block) (_ *admitted, res callResult) {
	c := new(admitted) // on the heap: see callOne
	ok := false
	if err := ctx.Err(); err != nil {
		return nil, errResult(use, "Interrupted: the run was stopped before %s started.", use.Name)
	}
	// Checked before anything decodes the input or quotes it back: an
	// oversized input costs memory in every step after this one, and the
	// model gets its size, never its text.
	limit := cfg.MaxToolInputBytes
	if limit <= 0 {
		limit = DefaultMaxToolInputBytes
	}
	if n := int64(len(use.Input)); n > limit {
		return nil, errResult(use, "InputTooLarge: the input of this %s call is %d bytes, over the limit of %d bytes (limits.maxToolInputBytes); the call did not run. Do the work in smaller calls.", use.Name, n, limit)
	}
	env := cfg.Env
	env.ToolUseID = use.ID
	t, found := cfg.Tools.Get(use.Name)
	denied := func(err error) callResult {
		r := errResult(use, "%v", err)
		r.denied, r.message = true, err.Error()
		if u, ok := errors.AsType[unaskedDenial](err); ok {
			if kind, unasked := u.Unasked(); unasked {
				r.unasked = kind
			}
		}
		if i, ok := errors.AsType[interrupter](err); ok && i.Interrupts() && cfg.interrupt != nil {
			cfg.interrupt(fmt.Errorf("%w: %v", ErrInterrupted, err))
		}
		return r
	}
	if !found {
		if cfg.Permit != nil {
			if _, err := cfg.Permit.PermitInput(ctx, use.Name, nil, env, use.Input); err != nil {
				return nil, denied(err)
			}
		}
		return nil, errResult(use, "Error: no such tool available: %s (available: %v)", use.Name, cfg.Tools.Names())
	}
	if err := cfg.Tools.Validate(use.Name, use.Input); err != nil {
		return nil, errResult(use, "InputValidationError: %s: %v", use.Name, err)
	}
	input := use.Input
	var before BeforeTool
	if cfg.Hooks != nil {
		before = cfg.Hooks.BeforeTool(ctx, env, use.Name, input)
		c.hooked, c.before = true, before
		// The hook's context and stop apply to whatever ends the call.
		defer func() {
			if !ok {
				res = c.withBefore(res)
			}
		}()
		if before.Deny {
			r := errResult(use, "%s", hookDenial(use.Name, before.Reason))
			r.denied = true
			return nil, r
		}
		if len(before.Input) > 0 {
			// A hook's input is judged as the model's was: size, schema,
			// then the permission layer below, deny rules first.
			if n := int64(len(before.Input)); n > limit {
				return nil, errResult(use, "InputTooLarge: a PreToolUse hook replaced the input of this %s call with %d bytes, over the limit of %d bytes; the call did not run.", use.Name, n, limit)
			}
			if err := cfg.Tools.Validate(use.Name, before.Input); err != nil {
				return nil, errResult(use, "InputValidationError: %s: the input a PreToolUse hook gave: %v", use.Name, err)
			}
			input = before.Input
		}
	}
	if cfg.Permit != nil {
		var (
			run json.RawMessage
			err error
		)
		if hp, ok := cfg.Permit.(HookPermitter); ok && before.Verdict != "" {
			run, err = hp.PermitVerdict(ctx, use.Name, t, env, input, before.Verdict, before.Reason)
		} else {
			run, err = cfg.Permit.PermitInput(ctx, use.Name, t, env, input)
		}
		if err != nil {
			return nil, denied(err)
		}
		if !bytes.Equal(run, input) {
			// The approver's input must be one the tool accepts, too.
			if err := cfg.Tools.Validate(use.Name, run); err != nil {
				return nil, errResult(use, "InputValidationError: %s: the input the approval changed the call to is not valid: %v", use.Name, err)
			}
			input = run
		}
		if rf, ok := cfg.Permit.(ReadFilterer); ok {
			if f := rf.ReadFilter(use.Name, t, env); f != nil {
				env.Readable = f
			}
		}
	}
	c.tool, c.env, c.input = t, env, input
	ok = true
	return c, res
}

// withBefore applies what a PreToolUse hook said to the call's result.
func (c *admitted) withBefore(res callResult) callResult {
	if c.hooked {
		res.block = withContext(res.block, c.before.Context)
		res.stop = res.stop || c.before.Stop
	}
	return res
}

// invoke runs the tool, and turns a panic in it into crash (with its
// stack): a tool bug must cost one tool call, not the session.
func (c *admitted) invoke(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			c.crash = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	c.r, c.err = c.tool.Call(ctx, c.env, c.input)
}

// result is the model's result of the call that ran, with the
// PostToolUse hooks' word.
func (c *admitted) result(ctx context.Context, cfg *Config, use llm.Block) callResult {
	var res callResult
	r, err := c.r, c.err
	switch {
	case c.crash != "":
		return c.withBefore(errResult(use, "Error: tool %s crashed: %s", use.Name, c.crash))
	case err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return c.withBefore(errResult(use, "Interrupted: the run was stopped while %s was running.", use.Name))
	case err != nil:
		return c.withBefore(errResult(use, "Error: %v", err))
	}
	content := r.Content
	if len(content) == 0 {
		content = []llm.Block{llm.Text("(no output)")}
	}
	res = callResult{block: llm.Block{Type: llm.BlockToolResult, ToolUseID: use.ID, Content: content, IsError: r.IsError}, meta: r.Meta}
	if !bytes.Equal(c.input, use.Input) {
		res.input = c.input
	}
	if cfg.Hooks != nil {
		after := cfg.Hooks.AfterTool(ctx, c.env, use.Name, c.input, response(r))
		res.block = withContext(res.block, after.Context)
		res.stop = after.Stop
	}
	res.stop = res.stop || r.Stop
	return c.withBefore(res)
}

// hookDenial is the model's text for a call a PreToolUse hook refused.
func hookDenial(name, reason string) string {
	if reason == "" {
		return fmt.Sprintf("A PreToolUse hook blocked this %s call.", name)
	}
	return fmt.Sprintf("A PreToolUse hook blocked this %s call: %s", name, reason)
}

// withContext adds hooks' text to a tool result, for the model.
func withContext(b llm.Block, text string) llm.Block {
	if text == "" {
		return b
	}
	b.Content = append(slices.Clone(b.Content), llm.Text(text))
	return b
}

// response is a tool result as a PostToolUse hook reads it: the tool's
// structured detail, else its text.
func response(r tool.Result) json.RawMessage {
	if r.Meta != nil {
		if b, err := json.Marshal(r.Meta); err == nil {
			return b
		}
	}
	var text string
	for _, b := range r.Content {
		text += b.Text
	}
	b, _ := json.Marshal(text)
	return b
}

// Estimate guesses the context msgs take where no response measured it
// (about four characters a token): enough to tell whether a conversation
// nears its window.
func Estimate(msgs []llm.Message) llm.Usage {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Thinking) + len(b.Input)
			for _, c := range b.Content {
				n += len(c.Text)
			}
		}
	}
	return llm.Usage{InputTokens: int64(n / 4)}
}
