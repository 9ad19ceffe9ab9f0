package cadre

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/skill"
	"github.com/cadre-dev/cadre/internal/structured"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/claude"
	"github.com/cadre-dev/cadre/internal/subagent/forkcmd"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// OpenRequest opens a live conversation (Runtime.Open).
type OpenRequest struct {
	// Resume continues the session with this id; Continue continues the
	// newest main session of the working directory.
	Resume   string
	Continue bool
	// SessionID, if set, is the id of the new session (a UUID, checked
	// like every id from outside). It cannot be combined with Resume or
	// Continue, unless Fork is set.
	SessionID string
	// Fork, with Resume or Continue, starts a new session from a copy of
	// that session's history, leaving it as it was.
	Fork bool
	// NoPersist keeps the main session's transcript in memory only: no
	// transcript file and no session record (subagents' sessions are
	// still recorded).
	NoPersist bool
	// Permission, if set, replaces Options.Permission for this
	// conversation's whole tree.
	Permission PermissionFunc
	// Model, if set, replaces the settings' model for this conversation.
	Model string
	// PermissionMode, if set, replaces the mode for this conversation.
	PermissionMode PermissionMode
}

// ContentBlock is a block of a user message: text or an image.
type ContentBlock = llm.Block

// Message is one user message sent to a conversation: Text, or Blocks
// (text and image blocks), or both (Text first).
type Message struct {
	Text   string
	Blocks []ContentBlock
	// UUID, if set, is the message's id in the transcript.
	UUID string
}

// llm is the message as the model gets it.
func (m Message) llm() (llm.Message, error) {
	out := llm.Message{Role: llm.RoleUser}
	if strings.TrimSpace(m.Text) != "" {
		out.Content = append(out.Content, llm.Text(m.Text))
	}
	for i, b := range m.Blocks {
		switch b.Type {
		case llm.BlockText:
		case llm.BlockImage:
			if b.Source == nil {
				return llm.Message{}, fmt.Errorf("message block %d: an image needs its source", i)
			}
		default:
			return llm.Message{}, fmt.Errorf("message block %d: type %q: a user message holds text and image blocks", i, b.Type)
		}
		out.Content = append(out.Content, b)
	}
	if len(out.Content) == 0 {
		return llm.Message{}, errors.New("the message is empty")
	}
	return out, nil
}

// resolved is a model built from its name.
type resolved struct {
	model llm.Model
	ref   provider.Ref
}

// Conversation is a live session of the main agent: it runs one turn per
// message sent, in order, and between them the turns that answer its
// background subagents' notifications, until it is closed or stopped. Its
// methods are safe for concurrent use.
type Conversation struct {
	r      *Runtime
	sr     *sessionRun
	target string // the main agent's queue target
	sub    *event.Sub
	ctx    context.Context
	stop   context.CancelCauseFunc
	done   chan struct{}
	input  chan struct{} // closed when no more messages come (Close)

	closeOnce sync.Once
	events    sync.Once

	mu         sync.Mutex
	closed     bool
	turn       context.CancelCauseFunc // cancels the turn in progress
	mode       permission.Mode
	model      llm.Model
	ref        provider.Ref
	fallback   resolved // Options.FallbackModel; model nil when none
	onFallback bool     // this turn's calls go to fallback
	turnCost   float64  // of the main agent's replies this turn, not in the totals yet
	remembered permission.Remembered
	asker      permission.Asker // the main agent's, naming it
	// thinking replaces Options.Thinking for the main agent's calls once
	// SetMaxThinkingTokens set it; a zero budget turns thinking off.
	thinking *llm.Thinking
	// lastUsage is the main agent's last reply's usage: what its context
	// held then (ContextUsage).
	lastUsage *llm.Usage

	started bool // the SessionStart hooks ran (serve's goroutine only)
}

// errInterrupted is the cause of a turn stopped by Interrupt.
var errInterrupted = errors.New("interrupted by the user")

// errBudget is the cause of a turn stopped by Options.MaxBudgetUSD.
var errBudget = errors.New("the run reached its budget")

// errStopped is the cause of a conversation stopped by Stop.
var errStopped = errors.New("stopped")

// errClosed is returned by Send after Close.
var errClosed = errors.New("the conversation is closed")

// Open starts a live conversation: it runs one turn per message sent, in
// order, queueing messages that arrive while a turn runs (DESIGN §7.4),
// with its background subagents' notifications answered between them as
// in a headless run, until Close or Stop. ctx bounds its whole life: when
// it ends, the conversation stops as with Stop. Setup failures (an unknown
// model or session) are returned before anything runs; resuming a session
// that does not exist is an error wrapping ErrNotFound.
func (r *Runtime) Open(ctx context.Context, req OpenRequest) (*Conversation, error) {
	return r.open(ctx, req, "")
}

func (r *Runtime) open(ctx context.Context, req OpenRequest, title string) (*Conversation, error) {
	sr, err := r.prepare(ctx, req, title)
	if err != nil {
		return nil, wrapNotFound(err)
	}
	var fallback resolved
	if name := strings.TrimSpace(r.opts.FallbackModel); name != "" {
		if fallback.model, fallback.ref, err = r.app.Model(name); err != nil {
			sr.abandon()
			return nil, fmt.Errorf("fallback model: %w", err)
		}
	}
	if check := r.app.CheckPrice(); check != nil && fallback.model != nil {
		if err := check(fallback.ref); err != nil {
			sr.abandon()
			return nil, fmt.Errorf("fallback model: %w", err)
		}
	}
	c := &Conversation{
		r: r, sr: sr, target: sr.sess.Info.ID, done: make(chan struct{}), input: make(chan struct{}),
		mode: sr.mode, model: sr.model, ref: sr.ref, fallback: fallback,
	}
	perm := r.opts.Permission
	if req.Permission != nil {
		perm = req.Permission
	}
	if perm != nil {
		c.asker = permission.Identify(r.app.Asker(perm), permission.Identity{Agent: "main"})
	}
	c.ctx, c.stop = context.WithCancelCause(ctx)
	if r.opts.MaxBudgetUSD > 0 {
		// Subagents add to the totals too: the budget stops the whole turn.
		sr.totals.Watch(func(llm.Cost) { c.checkBudget(llm.Cost{}) })
	}
	sr.caller = subagent.Caller{
		RootSessionID: sr.sess.Info.ID, SessionID: sr.sess.Info.ID, Agent: "main", AgentID: c.target,
		Model: sr.model, Ref: sr.ref, Mode: sr.mode, Cwd: r.app.Cwd, Totals: sr.totals,
		// The group lives as long as the conversation: background runs
		// outlast the turn that started them.
		Group: subagent.NewGroup(c.ctx),
		Asker: c.asker, Remembered: &c.remembered, RootTranscriptPath: sr.sess.Info.TranscriptPath,
		Fresh: sr.fresh, RecentTasks: &subagent.RecentTasks{},
		Live: func() subagent.Live {
			c.mu.Lock()
			defer c.mu.Unlock()
			return subagent.Live{Mode: c.mode, Model: c.model, Ref: c.ref}
		},
	}
	// The first model call waits for the MCP servers, boundedly (mcpReady).
	mcps := r.app.MCPReady(ctx)
	mcpTools := mcps.Tools()
	sr.mcpServers = mcps.ConnectedNames()
	base := slices.Clone(r.app.BaseTools)
	if r.app.OwnSkill {
		// The main agent's Skill tool runs a context: fork skill as a
		// fork of this caller (S-F2); children keep the shared one.
		for i, t := range base {
			if t.Info().Name == skill.Name {
				base[i] = skill.Tool(r.app.Commands, r.app.Grants, forkcmd.SkillFork(r.app.Subagents, sr.caller))
			}
		}
	}
	// The main agent's Bash runs its background commands as its tasks.
	base = r.app.Subagents.BindShells(sr.caller, base)
	tools := slices.Concat(base, mcpTools, r.app.Subagents.Tools(sr.caller))
	if r.app.Coordinator {
		// A coordinator only orchestrates: its own tools are the
		// subagent service's, and --json-schema's below.
		tools = slices.DeleteFunc(tools, func(t tool.Tool) bool { return !claude.CoordinatorTool(t.Info().Name) })
	}
	if len(r.opts.JSONSchema) > 0 {
		// Checked by New: the schema compiles.
		if sr.structured, err = structured.New(r.opts.JSONSchema); err != nil {
			c.stop(err)
			sr.abandon()
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		tools = append(tools, sr.structured)
	}
	all, err := tool.NewSet(tools...)
	if err != nil {
		c.stop(err)
		sr.abandon()
		return nil, err
	}
	// --tools picks from the built-in set, as Claude Code's does: MCP
	// tools are offered whatever it lists (rules still apply).
	sr.tools = r.app.Policy.Pool(all.Filter(func(t tool.Tool) bool {
		return (app.Offered(t, r.opts.ToolNames) || slices.Contains(mcpTools, t)) && r.app.MainAgentOffers(t)
	}))
	r.groupMu.Lock()
	r.groups[c.target] = sr.caller.Group
	r.groupMu.Unlock()
	if len(sr.history) > 0 {
		// Background remote runs this session started in a process that
		// has ended go on on their servers: follow them again here, where
		// their notifications reach the agent (S-W2).
		gone := func(owner string) bool { return owner != r.app.Owner.ID() && !r.app.OwnerAlive(ctx, owner) }
		if ids, err := r.app.Subagents.Reattach(ctx, sr.caller, gone); err != nil {
			r.app.Log.WarnContext(ctx, "follow the background remote runs of a resumed session again", "session", c.target, "err", err)
		} else if len(ids) > 0 {
			r.app.Log.Debug("followed background remote runs again", "session", c.target, "tasks", ids)
		}
	}
	c.sub = r.app.Bus.Subscribe(func(e event.Event) bool { return e.SessionID == c.target })
	r.app.Log.Debug("run started", "session", c.target, "model", sr.model.Name(), "resumed", len(sr.history) > 0)
	go c.serve()
	return c, nil
}

// SessionID is the main session's id.
func (c *Conversation) SessionID() string { return c.target }

// Send queues m for a turn of its own: it runs once the turns before it
// have (messages are answered in the order sent, ahead of waiting
// notifications). A slash command ("/name args") is run as in a headless
// run; an unknown one is an error here.
func (c *Conversation) Send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg, err := m.llm()
	if err != nil {
		return err
	}
	if m.UUID != "" {
		if err := session.ValidateID(m.UUID); err != nil {
			return fmt.Errorf("message uuid: %w", err)
		}
	}
	if len(msg.Content) == 1 && msg.Content[0].Type == llm.BlockText {
		if _, _, err := c.r.command(strings.TrimSpace(msg.Content[0].Text)); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.r.app.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModePrompt, Target: c.target, Message: msg, UUID: m.UUID})
	return nil
}

// Shell queues the user's own shell command (the TUI's "!command"): in
// its turn it runs as a Bash call of the main agent would — through the
// PreToolUse hooks, the permission rules and mode (a prompt, if they ask),
// the sandbox and the PostToolUse hooks, never around them — without a
// model call. The command and its output join the conversation as the
// user's message, which the main agent sees from its next turn on; the
// turn's result is the output.
func (c *Conversation) Shell(ctx context.Context, command string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strings.TrimSpace(command) == "" {
		return errors.New("run a shell command: the command is empty")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.r.app.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeShell, Target: c.target, Message: llm.UserText(command)})
	return nil
}

// RunAgent queues a direct run of the named subagent with prompt (the
// TUI's "@name text"): in its turn, the agent runs as a foreground child of
// the main agent, started without a main-model round trip; its events are
// emitted as any child's, tagged with a call id of the form "direct_…";
// the turn's result is its answer, and the exchange joins the conversation
// as the user's "@name prompt" and that answer, which the main agent sees
// from its next turn on. An unknown agent is an error here.
func (c *Conversation) RunAgent(ctx context.Context, agent, prompt string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strings.TrimSpace(prompt) == "" {
		return errors.New("run an agent: the prompt is empty")
	}
	if _, ok := c.r.app.Agents.Get(agent); !ok {
		return fmt.Errorf("run an agent: no agent named %q", agent)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.r.app.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeAgent, Target: c.target, Agent: agent, Message: llm.UserText(prompt)})
	return nil
}

// Events yields every event of the conversation's tree — the main agent's
// and its subagents' (tagged with the Agent call that started them), each
// turn ending with its result event — until the conversation ends. It may
// be ranged over once; stopping early only stops reading (Stop stops the
// conversation).
func (c *Conversation) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		first := false
		c.events.Do(func() { first = true })
		if !first {
			yield(Event{}, errors.New("the conversation's events are already being read"))
			return
		}
		for ev := range c.sub.Events(context.Background()) {
			if !yield(app.EventOf(ev), nil) {
				return
			}
		}
	}
}

// Interrupt stops the turn in progress and its foreground subagents; the
// conversation goes on. That turn's result says it was interrupted;
// messages sent meanwhile wait for the next turns. With no turn in
// progress it does nothing.
func (c *Conversation) Interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn != nil {
		c.turn(errInterrupted)
	}
}

// SetPermissionMode changes the main agent's permission mode from its next
// tool call on; subagents started from then on derive theirs from it (a
// child never gets more than its parent's mode allows).
func (c *Conversation) SetPermissionMode(m PermissionMode) error {
	mode, err := permission.ParseMode(string(m))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode = mode
	return nil
}

// SetModel changes the main agent's model from its next model call on.
// The name is resolved now: an unknown one is an error and changes
// nothing. "" (or "default") goes back to the model the conversation
// opened with.
func (c *Conversation) SetModel(name string) error {
	model, ref := c.sr.model, c.sr.ref
	if name = strings.TrimSpace(name); name != "" && name != "default" {
		var err error
		if model, ref, err = c.r.app.Model(name); err != nil {
			return fmt.Errorf("set model: %w", err)
		}
	}
	if check := c.r.app.CheckPrice(); check != nil {
		if err := check(ref); err != nil {
			return fmt.Errorf("set model: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.model, c.ref = model, ref
	return nil
}

// Model is the name of the model the main agent's next call uses: the one
// it opened with, or the one SetModel chose ("default" goes back).
func (c *Conversation) Model() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ref.Model
}

// Background moves a running foreground subagent of this conversation to
// the background — the one started by the Agent call toolUseID, or all of
// them when toolUseID is "" — as Ctrl+B does (DESIGN §7.1): the waiting
// Agent call returns "moved to the background" at once, and the child's
// result arrives later as a notification. It reports whether any run
// moved; an id that names no running foreground subagent is an error.
func (c *Conversation) Background(toolUseID string) (bool, error) {
	g := c.sr.caller.Group
	if toolUseID == "" {
		return g.Background() > 0, nil
	}
	moved, found := g.BackgroundCall(toolUseID)
	if !found {
		return false, fmt.Errorf("no subagent of this conversation is running for the call %q", toolUseID)
	}
	return moved, nil
}

// Close says no more messages come: the conversation answers those
// queued, then waits, as a headless run does, for its background
// subagents and answers their notifications, then ends Events. It returns
// once the conversation has ended.
func (c *Conversation) Close() error {
	c.closeInput()
	<-c.done
	return nil
}

// closeInput ends the input without waiting.
func (c *Conversation) closeInput() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.input)
	})
}

// Stop stops everything now, as SIGINT does: the turn in progress and
// every subagent, background ones included. The last event is a result
// saying the conversation was interrupted. It returns once everything has
// ended.
func (c *Conversation) Stop() error {
	c.closeInput()
	c.stop(errStopped)
	<-c.done
	return nil
}

// current is the main agent's model as it is now.
func (c *Conversation) current() (llm.Model, provider.Ref) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onFallback {
		return c.fallback.model, c.fallback.ref
	}
	return c.model, c.ref
}

// checkBudget stops the turn when the run tree's cost, with the main
// agent's replies of this turn (added to the totals when the turn ends)
// and spent more, reaches Options.MaxBudgetUSD.
//
// Under a budget every model is priced (checkPriced), so the costs are
// known; were one not, what the priced part cost still counts.
func (c *Conversation) checkBudget(spent llm.Cost) {
	budget := c.r.opts.MaxBudgetUSD
	if budget <= 0 {
		return
	}
	total, _ := c.sr.totals.Cost().USD()
	more, _ := spent.USD()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turnCost += more
	if total+c.turnCost >= budget && c.turn != nil {
		c.turn(errBudget)
	}
}

// switchToFallback moves the rest of the turn's calls to the fallback
// model after err, if err is an overload or an outage and there is a
// fallback not in use yet; it reports whether it did.
func (c *Conversation) switchToFallback(err error) bool {
	var e *llm.Error
	if !errors.As(err, &e) || (e.Kind != llm.ErrOverloaded && e.Status != http.StatusServiceUnavailable) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fallback.model == nil || c.onFallback {
		return false
	}
	c.onFallback = true
	c.r.app.Log.Warn("the model is unavailable: switching to the fallback model for this turn", "model", c.model.Name(), "fallback", c.fallback.model.Name(), "err", err)
	return true
}

// policy is the main agent's policy as it is now.
func (c *Conversation) policy() *permission.Policy {
	p := c.r.app.Policy
	c.mu.Lock()
	p.Mode = c.mode
	c.mu.Unlock()
	p.Asker, p.Remembered = c.asker, &c.remembered
	return &p
}

// livePolicy decides the main agent's calls under the conversation's
// policy as it is at each call. It is all the loop looks for in a
// Permitter: a loop.HookPermitter and a loop.ReadFilterer.
type livePolicy struct{ c *Conversation }

func (l livePolicy) PermitInput(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage) (json.RawMessage, error) {
	return l.c.policy().PermitInput(ctx, name, t, env, input)
}

func (l livePolicy) PermitVerdict(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage, verdict, reason string) (json.RawMessage, error) {
	return l.c.policy().PermitVerdict(ctx, name, t, env, input, verdict, reason)
}

func (l livePolicy) ReadFilter(name string, t tool.Tool, env tool.Env) func(string) bool {
	return l.c.policy().ReadFilter(name, t, env)
}

// liveModel is the main agent's model as it is at each call.
type liveModel struct{ c *Conversation }

func (m liveModel) Name() string {
	model, _ := m.c.current()
	return model.Name()
}

func (m liveModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.c.mu.Lock()
		if t := m.c.thinking; t != nil {
			r := *req
			r.Thinking = nil
			if t.BudgetTokens > 0 {
				r.Thinking = &llm.Thinking{BudgetTokens: t.BudgetTokens}
			}
			req = &r
		}
		m.c.mu.Unlock()
		for ev, err := range m.stream(ctx, req) {
			if err == nil && ev.Type == llm.EventDone && ev.Response != nil {
				_, ref := m.c.current()
				m.c.checkBudget(m.c.r.app.Pricing.Cost(ref, ev.Response.Usage))
				u := ev.Response.Usage
				m.c.mu.Lock()
				m.c.lastUsage = &u
				m.c.mu.Unlock()
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// stream streams req on the current model, or on the fallback model when
// the current one is unavailable.
func (m liveModel) stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		model, _ := m.c.current()
		for ev, err := range model.Stream(ctx, req) {
			if err != nil && m.c.switchToFallback(err) {
				// What streamed before is void, as after a retry; the
				// request names no model id of its own (the model knows
				// its id), so the same request goes to the fallback.
				fb, _ := m.c.current()
				if !yield(llm.Event{Type: llm.EventRetry, Delta: "switched to the fallback model " + fb.Name()}, nil) {
					return
				}
				for ev, err := range fb.Stream(ctx, req) {
					if !yield(ev, err) || err != nil {
						return
					}
				}
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// serve runs the conversation: a turn for each message and for the
// notifications between them, until the input is closed and nothing is
// left to answer, or the conversation is stopped. Stopping stops the whole
// tree (S-C4).
func (c *Conversation) serve() {
	sr, r := c.sr, c.r
	defer close(c.done)
	defer c.sub.Close()
	defer r.app.Log.Debug("run ended", "session", c.target)
	defer func() {
		r.groupMu.Lock()
		delete(r.groups, c.target)
		r.groupMu.Unlock()
	}()
	// The first init comes at once (front ends wait for it: ACP's
	// commands, the TUI's model); each later turn has its own, below.
	sr.publishInit(sr.model.Name(), c.mode)
	hooks := sr.hooks()
	defer sr.end(hooks)
	conv := runner.Start(runner.Spec{
		Session: sr.sess,
		Hooks:   hooks,
		Loop: runner.LoopConfig(runner.Agent{
			Hooks: hooks,
			Name:  "main", Model: liveModel{c}, ModelID: sr.ref.Model, System: sr.system,
			Tools: sr.tools, Permit: livePolicy{c}, Env: tool.Env{Cwd: r.app.Cwd, SessionID: c.target},
			MaxTurns: r.app.Cfg.Settings.MaxTurns, MaxToolInputBytes: r.app.Cfg.Settings.Limits.MaxToolInputBytes,
			Compaction: app.Compaction(r.app.Cfg.Settings.Compaction),
			Spent: func(u llm.Usage) {
				model, ref := c.current()
				sr.totals.Add(model.Name(), u, r.app.Pricing.Cost(ref, u))
			},
			SystemContext: sr.context,
			Preamble:      r.app.Context,
			Thinking:      r.opts.Thinking,
			OnEnd:         sr.remind,
			Inbox:         func() []llm.Message { return queue.Messages(r.app.Queue.TakeInput(c.target)) },
			Tracer:        r.app.Tracer,
		}),
		Tag:     runner.Tag{RootSessionID: c.target},
		Partial: r.opts.IncludePartialMessages,
		Cost: func(u llm.Usage) llm.Cost {
			_, ref := c.current()
			return r.app.Pricing.Cost(ref, u)
		},
		Totals:        sr.totals,
		Bus:           r.app.Bus,
		Now:           r.app.Now,
		Logger:        r.app.Log, // the loop's warnings too (a failed compaction)
		RecordHistory: sr.recordHistory,
	}, sr.history)
	group := sr.caller.Group
	var (
		last   *runner.Result
		status session.Status
		failed bool
		turns  int
	)
	for {
		entries := c.next(failed)
		if len(entries) == 0 {
			break
		}
		tctx, cancel := context.WithCancelCause(c.ctx)
		c.mu.Lock()
		c.turn, c.onFallback, c.turnCost = cancel, false, 0
		c.mu.Unlock()
		// Each later turn starts with an init event too, as each of Claude
		// Code's does: a reader learns the model and mode the turn runs in.
		if turns > 0 {
			model, _ := c.current()
			c.mu.Lock()
			mode := c.mode
			c.mu.Unlock()
			sr.publishInit(model.Name(), mode)
		}
		turns++
		c.checkBudget(llm.Cost{}) // spent already: no call is made
		res := c.tracedTurn(tctx, conv, hooks, entries)
		c.mu.Lock()
		c.turn = nil
		c.mu.Unlock()
		cause := context.Cause(tctx)
		cancel(nil)
		last, status = res, res.Status
		if c.ctx.Err() != nil {
			break // stopped: the result comes last, below
		}
		interrupted := errors.Is(cause, errInterrupted) || errors.Is(res.Err, loop.ErrInterrupted)
		if errors.Is(cause, errInterrupted) {
			res = interruptedTurn(cause, res)
		}
		if errors.Is(cause, errBudget) {
			res = overBudget(r.opts.MaxBudgetUSD, res)
		}
		failed = res.Err != nil && !interrupted
		sr.finish(res, sr.totals)
	}
	group.Stop(context.Canceled)
	group.Wait()
	if c.ctx.Err() != nil {
		// Stopping the tree makes its runs report their end: the result
		// goes after all of that, last, and says why the run ended.
		if err := conv.Close(session.StatusKilled); err != nil {
			r.app.Log.Warn("save the interrupted session", "session", c.target, "err", err)
		}
		sr.finish(interrupted(c.ctx, last), sr.totals)
		return
	}
	if err := conv.Close(status); err != nil && (last == nil || last.Err == nil) {
		sr.finish(&runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: fmt.Errorf("saving the session: %w", err)}}, sr.totals)
	}
}

// next waits for the input of the next turn: the next message sent, or
// the notifications and messages waiting for the main agent. It returns
// nothing once the input is closed and nothing is left to answer — no
// message queued, and no background run of the main agent going on
// (none is waited for after a failed turn, as in a headless run) — or
// when the conversation is stopped.
func (c *Conversation) next(failed bool) []queue.Entry {
	q, group := c.r.app.Queue, c.sr.caller.Group
	for c.ctx.Err() == nil {
		// Taken before looking, so that a change in between wakes the wait.
		pushed, ended := q.Changed(), group.Changed()
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		es, over := nextTurn(closed, failed, func() bool { return group.HasRunning(c.target) }, func() []queue.Entry { return q.TakeTurn(c.target) })
		if len(es) > 0 || over {
			return es
		}
		input := c.input
		if closed {
			input = nil
		}
		select {
		case <-pushed:
		case <-ended:
		case <-input:
		case <-c.ctx.Done():
		}
	}
	return nil
}

// nextTurn looks once for the input of the next turn: the entries
// waiting (take), or over when there is none and none can come — the input
// is closed and no background run of the main agent is going on (running),
// or a failed turn is not followed. running is counted before take looks:
// a run pushes its notification before it stops counting, so one that
// ends in between is either counted (and waited for) or already queued; the
// other order could miss the last notification and end without answering
// it.
func nextTurn(closed, failed bool, running func() bool, take func() []queue.Entry) (es []queue.Entry, over bool) {
	some := running()
	if es := take(); len(es) > 0 {
		if closed && failed && es[0].Mode != queue.ModePrompt {
			return nil, true
		}
		return es, false
	}
	return nil, closed && (failed || !some)
}

// runTurn runs one turn on entries: a message, a direct agent run, or
// notifications.
func (c *Conversation) runTurn(ctx context.Context, conv *runner.Conversation, hooks *runner.Hooks, entries []queue.Entry) *runner.Result {
	if len(entries) == 1 && entries[0].Mode == queue.ModeAgent {
		return c.sr.runAgent(ctx, conv, entries[0].Agent, entries[0].Message.Text())
	}
	if len(entries) == 1 && entries[0].Mode == queue.ModeShell {
		return c.sr.runShell(ctx, conv, entries[0].Message.Text())
	}
	if len(entries) == 1 && entries[0].Mode == queue.ModeCompact {
		return compactTurn(ctx, conv)
	}
	if len(entries) == 1 && entries[0].Mode == queue.ModePrompt {
		e := entries[0]
		typed := e.Message.Text()
		if len(e.Message.Content) == 1 && e.Message.Content[0].Type == llm.BlockText {
			text := strings.TrimSpace(e.Message.Content[0].Text)
			cmd, args, err := c.r.command(text)
			if name, _, ok := command.Parse(text); ok && err == nil && cmd == nil {
				// /mcp__server__prompt args: the server's prompt is the message.
				prompt, perr := c.r.app.MCPReady(ctx).Prompt(ctx, name, args)
				if perr != nil {
					return &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: perr}, Status: session.StatusFailed}
				}
				e.Message = llm.UserText(prompt)
			}
			switch {
			case err != nil:
				// Checked by Send; the command files do not change since.
				return &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}, Status: session.StatusFailed}
			case cmd != nil && cmd.Context == "fork":
				return c.sr.runCommand(ctx, conv, cmd, args, text)
			case cmd != nil:
				// A plain command is a prompt template.
				e.Message = llm.UserText(cmd.Expand(args))
			}
		}
		if !c.started {
			// A conversation opened without a prompt (the TUI's) is named
			// by its first message, as a run is by its prompt.
			c.sr.sess.SetTitle(title(strings.TrimSpace(typed)))
		}
		// A skill's allowed-tools hold for the turn that invoked it, as in
		// Claude Code: a new message starts without them.
		c.r.app.Grants.Clear(c.target)
		msg, err := c.sr.input(ctx, hooks, e.Message, !c.started)
		c.started = true
		if err != nil {
			// A hook blocked the message: it is not recorded.
			return &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}, Status: session.StatusFailed}
		}
		return conv.TurnInput(ctx, runner.Input{Message: msg, UUID: e.UUID, Quiet: true})
	}
	in := make([]runner.Input, len(entries))
	for i, e := range entries {
		in[i] = runner.Input{Message: e.Message, UUID: e.UUID}
	}
	return conv.TurnInput(ctx, in...)
}

// interruptedTurn is the result of a turn Interrupt stopped: its own
// figures, and why it ended.
func interruptedTurn(cause error, res *runner.Result) *runner.Result {
	return endedTurn(res, loop.SubtypeExecution, fmt.Errorf("the turn was interrupted (%v)", cause), session.StatusKilled)
}

// overBudget is the result of a turn stopped by the budget.
func overBudget(budget float64, res *runner.Result) *runner.Result {
	return endedTurn(res, loop.SubtypeMaxBudget, fmt.Errorf("reached the maximum budget ($%g)", budget), session.StatusFailed)
}

// endedTurn is res, with the subtype, error and status of why the
// runtime ended it.
func endedTurn(res *runner.Result, subtype string, err error, status session.Status) *runner.Result {
	out := *res.Outcome
	out.Subtype, out.Err = subtype, err
	r := *res
	r.Outcome, r.Status = &out, status
	return &r
}

var (
	_ loop.HookPermitter = livePolicy{}
	_ loop.ReadFilterer  = livePolicy{}
)
