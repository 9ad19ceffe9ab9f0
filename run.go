package cadre

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mcp"
	"github.com/cadre-dev/cadre/internal/prompts"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/structured"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Request is one prompt to run.
type Request struct {
	Prompt string
	// Resume continues the session with this id; Continue continues the
	// newest main session of the working directory.
	Resume   string
	Continue bool
}

// Run runs req and yields the session's events as they happen, ending with
// the result event. Setup failures (an unknown model, a missing key, an
// unknown session) are yielded as errors before any event; a run that fails
// later still ends with a result event whose IsError is set. Stopping the
// iteration early cancels the run and waits for it to wind down.
func (r *Runtime) Run(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		sr, err := r.prepare(ctx, req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		r.log.Debug("run started", "session", sr.sess.Info.ID, "model", sr.model.Name(), "resumed", len(sr.history) > 0)
		defer r.log.Debug("run ended", "session", sr.sess.Info.ID)
		r.groupMu.Lock()
		r.groups[sr.sess.Info.ID] = sr.caller.Group
		r.groupMu.Unlock()
		defer func() {
			r.groupMu.Lock()
			delete(r.groups, sr.sess.Info.ID)
			r.groupMu.Unlock()
		}()
		sub := r.bus.Subscribe(func(e event.Event) bool { return e.SessionID == sr.sess.Info.ID })
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer sub.Close()
			sr.run(ctx)
		}()
		for ev := range sub.Events(context.Background()) {
			if !yield(eventOf(ev), nil) {
				cancel()
				break
			}
		}
		<-done
	}
}

// sessionRun is one Run in progress.
type sessionRun struct {
	r       *Runtime
	sess    *session.Session
	history []llm.Message
	prompt  string
	model   llm.Model
	ref     provider.Ref
	tools   *tool.Set
	system  string
	start   time.Time
	caller  subagent.Caller
	totals  *runner.Totals
	// structured is the StructuredOutput tool of Options.JSONSchema.
	structured *structured.Tool
	// command is a `context: fork` slash command to run instead of a turn.
	command *command.Command
	args    string
}

func (r *Runtime) prepare(ctx context.Context, req Request) (*sessionRun, error) {
	prompt := strings.TrimSpace(req.Prompt)
	if prompt == "" {
		return nil, errors.New("no prompt given: pass it as an argument or on standard input")
	}
	var cmd *command.Command
	var args string
	if name, a, ok := command.Parse(prompt); ok {
		c, found := r.commands.Get(name)
		switch {
		case !found && mcp.IsPromptCommand(name):
			// /mcp__server__prompt args: the server's prompt is the message.
			text, err := r.mcpReady(ctx).Prompt(ctx, name, a)
			if err != nil {
				return nil, err
			}
			prompt = text
		case !found:
			var known []string
			for _, c := range r.commands.All() {
				known = append(known, "/"+c.Name)
			}
			return nil, fmt.Errorf("unknown command /%s (known: %s)", name, orNone(strings.Join(known, ", ")))
		case c.Context == "fork":
			cmd, args = &c, a
		default:
			// A plain command is a prompt template.
			prompt = c.Expand(a)
		}
	}
	var (
		model llm.Model
		ref   provider.Ref
		err   error
	)
	if r.opts.LLM != nil {
		model, ref = r.opts.LLM, provider.Ref{Provider: "sdk", Model: r.opts.LLM.Name()}
	} else if model, ref, err = r.model(r.cfg.Settings.Model); err != nil {
		return nil, err
	}
	sr := &sessionRun{r: r, prompt: prompt, model: model, ref: ref, start: r.now(), command: cmd, args: args}
	if req.Resume != "" || req.Continue {
		// Recovery may be about to mark this session, or its tasks, failed:
		// it goes first. A new session has nothing it could touch.
		if err := r.settled(ctx); err != nil {
			return nil, fmt.Errorf("recover before resuming: %w", err)
		}
	}
	switch {
	case req.Resume != "" && req.Continue:
		return nil, errors.New("--resume and --continue cannot be used together")
	case req.Resume != "":
		sr.sess, sr.history, err = r.sessions.Open(ctx, req.Resume)
		if err != nil {
			return nil, fmt.Errorf("resume %s: %w", req.Resume, err)
		}
	case req.Continue:
		latest, err := r.sessions.Latest(ctx, r.cwd)
		if err != nil {
			return nil, fmt.Errorf("continue: no earlier session in %s: %w", r.cwd, err)
		}
		if sr.sess, sr.history, err = r.sessions.Open(ctx, latest.ID); err != nil {
			return nil, fmt.Errorf("continue %s: %w", latest.ID, err)
		}
	default:
		sr.sess, err = r.sessions.Create(ctx, session.Info{Agent: "main", Cwd: r.cwd, Title: title(prompt)})
		if err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	}
	sr.totals = &runner.Totals{}
	sr.caller = subagent.Caller{
		RootSessionID: sr.sess.Info.ID, SessionID: sr.sess.Info.ID, Agent: "main",
		Model: model, Ref: ref, Mode: r.policy.Mode, Cwd: r.cwd, Totals: sr.totals,
		// The group lives as long as this Run: background runs outlast the
		// turn that started them, not the session.
		Group:              subagent.NewGroup(ctx),
		RootTranscriptPath: sr.sess.Info.TranscriptPath,
	}
	// The first model call waits for the MCP servers, boundedly (mcpReady).
	tools := slices.Concat(r.baseTools, r.mcpReady(ctx).Tools(), r.subagents.Tools(sr.caller))
	if len(r.opts.JSONSchema) > 0 {
		if sr.structured, err = structured.New(r.opts.JSONSchema); err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		tools = append(tools, sr.structured)
	}
	all, err := tool.NewSet(tools...)
	if err != nil {
		return nil, err
	}
	sr.tools = r.policy.Pool(all.Filter(func(t tool.Tool) bool { return offered(t, r.opts.ToolNames) }))
	// A skill's allowed-tools hold for the turn that invoked it, as in
	// Claude Code: a new prompt starts without them.
	r.grants.Clear(sr.sess.Info.ID)
	sr.system = r.systemPrompt()
	return sr, nil
}

// DefaultSystemPrompt is the main agent's system prompt when
// Options.SystemPrompt is empty: the base that Options.AppendSystemPrompt
// extends, before cadre adds the working directory, platform and date.
func DefaultSystemPrompt() string { return prompts.System }

func (r *Runtime) systemPrompt() string {
	sys := r.opts.SystemPrompt
	if sys == "" {
		sys = prompts.System
	}
	return runner.SystemPrompt(sys, r.cwd, r.now(), r.opts.AppendSystemPrompt)
}

func (sr *sessionRun) publish(e event.Event) {
	e.SessionID = sr.sess.Info.ID
	if e.UUID == "" {
		e.UUID = ids.New()
	}
	if e.Time.IsZero() {
		e.Time = sr.r.now()
	}
	sr.r.bus.Publish(e)
}

// run answers the prompt, then — while background runs of the session go
// on — every notification and message addressed to the main agent, one
// turn each (S-Q2). Stopping the session stops the whole tree (S-C4).
func (sr *sessionRun) run(ctx context.Context) {
	r := sr.r
	sr.publish(event.Event{Type: event.TypeSystem, Subtype: "init", Init: &event.Init{
		Cwd: r.cwd, Tools: sr.tools.Names(), Model: sr.model.Name(), PermissionMode: string(r.policy.Mode),
		Version: Version, APIKeySource: apiKeySource(sr.ref, r.getenv), Agents: r.agentNames(),
		SlashCommands: r.commandNames(command.KindCommand), Skills: r.commandNames(command.KindSkill),
		MCPServers: r.mcpInit(),
	}})
	hooks := sr.hooks()
	conv := runner.Start(runner.Spec{
		Session: sr.sess,
		Hooks:   hooks,
		Loop: runner.LoopConfig(runner.Agent{
			Hooks: hooks,
			Name:  "main", Model: sr.model, ModelID: sr.ref.Model, System: sr.system,
			Tools: sr.tools, Permit: &r.policy, Env: tool.Env{Cwd: r.cwd, SessionID: sr.sess.Info.ID},
			MaxTurns: r.cfg.Settings.MaxTurns, MaxToolInputBytes: r.cfg.Settings.Limits.MaxToolInputBytes,
			Compaction:    compaction(r.cfg.Settings.Compaction),
			Spent:         func(u llm.Usage) { sr.totals.Add(sr.model.Name(), u, r.pricing.Cost(sr.ref, u)) },
			SystemContext: sr.context,
			Preamble:      r.context,
			Inbox:         func() []llm.Message { return inbox(r.queue.Take("")) },
			Thinking:      r.opts.Thinking,
			OnEnd:         sr.remind,
		}),
		Tag:     runner.Tag{RootSessionID: sr.sess.Info.ID},
		Partial: r.opts.IncludePartialMessages,
		Cost:    func(u llm.Usage) float64 { return r.pricing.Cost(sr.ref, u) },
		Totals:  sr.totals,
		Bus:     r.bus,
		Now:     r.now,
		Logger:  r.log, // the loop's warnings too (a failed compaction)
	}, sr.history)
	group := sr.caller.Group
	if sr.command != nil {
		sr.runCommand(ctx, conv)
		group.Stop(context.Canceled)
		group.Wait()
		return
	}
	defer sr.end(hooks)
	input, err := sr.input(ctx, hooks)
	if err != nil {
		if cerr := conv.Close(session.StatusFailed); cerr != nil {
			r.log.Warn("save the session of a blocked prompt", "session", sr.sess.Info.ID, "err", cerr)
		}
		sr.finish(&runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}, sr.totals, false)
		return
	}
	var results []*runner.Result
	last := conv.Drain(ctx, input, r.subagents.Pending(sr.caller), func(res *runner.Result) {
		results = append(results, res)
		if ctx.Err() != nil {
			return // interrupted: the result comes last, below
		}
		sr.finish(res, sr.totals, len(results) > 1)
	})
	group.Stop(context.Canceled)
	group.Wait()
	if ctx.Err() != nil {
		// Stopping the tree makes its runs report their end: the result
		// goes after all of that, last, and says why the run ended.
		if err := conv.Close(session.StatusKilled); err != nil {
			r.log.Warn("save the interrupted session", "session", sr.sess.Info.ID, "err", err)
		}
		sr.finish(interrupted(ctx, last), sr.totals, len(results) > 1)
		return
	}
	if err := conv.Close(""); err != nil && last.Err == nil {
		sr.finish(&runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: fmt.Errorf("saving the session: %w", err)}}, sr.totals, true)
	}
}

// interrupted is the result of a run stopped from outside (SIGINT, an SDK
// cancel): the turn it cut short, or, when the main agent was waiting for
// background runs, its last answer, ending with the reason.
func interrupted(ctx context.Context, last *runner.Result) *runner.Result {
	out := loop.Outcome{}
	res := runner.Result{Outcome: &out, Status: session.StatusKilled}
	if last != nil && last.Outcome != nil {
		out.Result = last.Result
		if last.Err != nil {
			// The interrupted turn's own figures.
			out = *last.Outcome
			res.Cost, res.Duration = last.Cost, last.Duration
		}
	}
	out.Subtype, out.Err = loop.SubtypeExecution, fmt.Errorf("the run was interrupted (%v)", context.Cause(ctx))
	return &res
}

// runCommand runs a `context: fork` slash command (S-F2): synchronously,
// in a forked child that sees this session's conversation and has exactly
// the command's allowed-tools; its final text is the command's output,
// recorded in this session as the answer to the command.
func (sr *sessionRun) runCommand(ctx context.Context, conv *runner.Conversation) {
	cmd := sr.command
	res, err := sr.r.subagents.RunCommand(ctx, sr.caller, subagent.CommandRun{
		Name: cmd.Name, Prompt: cmd.Expand(sr.args), Agent: cmd.Agent, Model: cmd.Model,
		AllowedTools: cmd.AllowedTools, History: sr.history,
	})
	if err == nil && res == nil {
		err = errors.New("the command's run ended without a result")
	}
	if err != nil {
		res = &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}
	}
	// The main session keeps the exchange, so a resumed session knows the
	// command ran and what it said.
	answer := res.Result
	if answer == "" {
		answer = fmt.Sprintf("(/%s produced no output", cmd.Name)
		if res.Err != nil {
			answer += ": " + res.Err.Error()
		}
		answer += ")"
	}
	if rerr := conv.Record(llm.UserText(sr.prompt), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(answer)}}); rerr != nil && res.Err == nil {
		res.Err = rerr
	}
	status := session.StatusCompleted
	if res.Err != nil {
		status = session.StatusFailed
		res.Subtype = loop.SubtypeExecution
	}
	if err := conv.Close(status); err != nil {
		sr.r.log.Warn("save the session after a command", "session", sr.sess.Info.ID, "command", cmd.Name, "err", err)
	}
	sr.finish(res, sr.totals, false)
}

// remind is the loop's OnEnd: with --json-schema, a model that ends
// without giving its structured output is told once to give it.
func (sr *sessionRun) remind() *llm.Message {
	if sr.structured == nil {
		return nil
	}
	return sr.structured.Remind()
}

// context is the per-turn context: the agents the main agent may delegate
// to and its background tasks. It changes as tasks come and go, so the
// loop sends it after the cached prompt, never in it.
func (sr *sessionRun) context(ctx context.Context) string {
	return sr.r.subagents.SystemContext(ctx, sr.caller)
}

func inbox(entries []queue.Entry) []llm.Message {
	out := make([]llm.Message, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out
}

// finish publishes the result: this session's turns, and the usage and cost
// of the whole run tree (subagents included).
func (sr *sessionRun) finish(res *runner.Result, totals *runner.Totals, followUp bool) {
	usage, cost, byModel := totals.Snapshot()
	out := &event.Result{
		IsError: res.Subtype != loop.SubtypeSuccess, Result: res.Result, NumTurns: res.Turns,
		Duration: sr.r.now().Sub(sr.start), APIDuration: res.APIDuration, TotalCostUSD: cost,
		Usage: usage, StopReason: res.StopReason, ModelUsage: byModel,
	}
	for _, d := range res.Denials {
		out.PermissionDenials = append(out.PermissionDenials, event.Denial{ToolName: d.Tool, ToolUseID: d.ToolUseID, ToolInput: d.Input})
	}
	if sr.structured != nil && !out.IsError {
		if so := sr.structured.Output(); so != nil {
			// Claude Code's result is then the output's JSON text.
			out.StructuredOutput, out.Result = so, string(so)
		}
	}
	switch {
	case res.Err != nil:
		out.Errors = []string{res.Err.Error()}
	case res.Subtype == loop.SubtypeMaxTurns:
		out.Errors = []string{fmt.Sprintf("reached the maximum number of turns (%d)", res.Turns)}
	}
	sr.publish(event.Event{Type: event.TypeResult, Subtype: res.Subtype, Result: out})
}

func apiKeySource(ref provider.Ref, getenv func(string) string) string {
	for _, v := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if strings.HasPrefix(v, strings.ToUpper(ref.Provider)) && getenv(v) != "" {
			return v
		}
	}
	return "none"
}

func title(prompt string) string {
	line, _, _ := strings.Cut(prompt, "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// commandNames lists the slash commands (or skills) found, for the init
// line.
func (r *Runtime) commandNames(kind command.Kind) []string {
	var names []string
	for _, c := range r.commands.All() {
		if c.Kind == kind {
			names = append(names, c.Name)
		}
	}
	return names
}
