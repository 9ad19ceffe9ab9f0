package cadre

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mcp"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/prompts"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/structured"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/claude"
	"github.com/cadre-dev/cadre/internal/subagent/forkcmd"
	"github.com/cadre-dev/cadre/internal/tmplexec"
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
	// SessionID, Fork, NoPersist, Permission, Model and PermissionMode are
	// as in OpenRequest.
	SessionID      string
	Fork           bool
	NoPersist      bool
	Permission     PermissionFunc
	Model          string
	PermissionMode PermissionMode
}

func (req Request) open() OpenRequest {
	return OpenRequest{
		Resume: req.Resume, Continue: req.Continue, SessionID: req.SessionID, Fork: req.Fork, NoPersist: req.NoPersist,
		Permission: req.Permission, Model: req.Model, PermissionMode: req.PermissionMode,
	}
}

// Run runs req and yields the session's events as they happen, ending with
// the result event. Setup failures (an unknown model, a missing key, an
// unknown session) are yielded as errors before any event; a run that fails
// later still ends with a result event whose IsError is set. Stopping the
// iteration early cancels the run and waits for it to wind down.
//
// It is a conversation (Open) of one message, closed at once: after its
// answer, the run goes on while background subagents run, answering their
// notifications.
func (r *Runtime) Run(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		prompt := strings.TrimSpace(req.Prompt)
		if prompt == "" {
			yield(Event{}, errors.New("no prompt given: pass it as an argument or on standard input"))
			return
		}
		if _, _, err := r.command(prompt); err != nil {
			yield(Event{}, err)
			return
		}
		c, err := r.open(ctx, req.open(), title(prompt))
		if err != nil {
			yield(Event{}, err)
			return
		}
		if err := c.Send(ctx, Message{Text: req.Prompt}); err != nil {
			c.Stop()
			yield(Event{}, err)
			return
		}
		c.closeInput()
		for ev, err := range c.Events() {
			if !yield(ev, err) {
				c.Stop()
				break
			}
		}
		<-c.done
	}
}

// command finds the slash command prompt names: nil when prompt is not
// one, an error when no such command exists.
func (r *Runtime) command(prompt string) (*command.Command, string, error) {
	name, args, ok := command.Parse(prompt)
	if !ok {
		return nil, "", nil
	}
	c, found := r.app.Commands.Get(name)
	if !found && mcp.IsPromptCommand(name) {
		return nil, args, nil // an MCP server's prompt: expanded when its turn comes (mcpPrompt)
	}
	if !found {
		var known []string
		for _, c := range r.app.Commands.All() {
			known = append(known, "/"+c.Name)
		}
		return nil, "", fmt.Errorf("unknown command /%s (known: %s)", name, orNone(strings.Join(known, ", ")))
	}
	return &c, args, nil
}

// sessionRun is the session of one conversation.
type sessionRun struct {
	r       *Runtime
	sess    *session.Session
	history []llm.Message
	// recordHistory: the history is a copy (a fork), written into the new
	// transcript.
	recordHistory bool
	model         llm.Model
	ref           provider.Ref
	mode          permission.Mode
	tools         *tool.Set
	// mcpServers are the MCP servers whose tools are in tools.
	mcpServers []string
	system     string
	start      time.Time
	caller     subagent.Caller
	totals     *runner.Totals
	// counted is the totals by model the previous result reported.
	counted map[string]event.ModelUsage
	// structured is the StructuredOutput tool of Options.JSONSchema.
	structured *structured.Tool
	// costs are the subagents' figures as the results last read them.
	costs app.Costs
	// fresh: the session was created here (new, or a fork's copy), so its
	// task records can only be its own runs' (subagent.Caller.Fresh).
	fresh bool
}

func (r *Runtime) prepare(ctx context.Context, req OpenRequest, title string) (*sessionRun, error) {
	var (
		model llm.Model
		ref   provider.Ref
		err   error
	)
	switch {
	case req.Model != "":
		if model, ref, err = r.app.Model(strings.TrimSpace(req.Model)); err != nil {
			return nil, err
		}
	case r.opts.LLM != nil:
		model, ref = r.opts.LLM, provider.Ref{Provider: "sdk", Model: r.opts.LLM.Name()}
	default:
		if model, ref, err = r.app.Model(r.app.Cfg.Settings.Model); err != nil {
			if r.app.DefaultModel {
				return nil, fmt.Errorf("no model given, and the default model %s cannot be used (pass --model or set \"model\" in settings): %w", r.app.Cfg.Settings.Model, err)
			}
			return nil, err
		}
	}
	if check := r.app.CheckPrice(); check != nil {
		// Before any record is made: the run is refused, not failed.
		if err := check(ref); err != nil {
			return nil, err
		}
	}
	mode := r.app.Policy.Mode
	if req.PermissionMode != "" {
		if mode, err = permission.ParseMode(string(req.PermissionMode)); err != nil {
			return nil, err
		}
	}
	if req.SessionID != "" {
		if err := session.ValidateID(req.SessionID); err != nil {
			return nil, fmt.Errorf("session id: %w", err)
		}
	}
	resuming := req.Resume != "" || req.Continue
	switch {
	case req.Resume != "" && req.Continue:
		return nil, errors.New("--resume and --continue cannot be used together")
	case req.Fork && !resuming:
		return nil, errors.New("forking a session needs --resume or --continue: the session to fork")
	case req.SessionID != "" && resuming && !req.Fork:
		return nil, errors.New("a session id names a new session: with --resume or --continue it needs --fork-session")
	}
	sr := &sessionRun{r: r, model: model, ref: ref, mode: mode, start: r.app.Now()}
	sessions := r.app.Sessions
	if req.NoPersist {
		sessions = session.NewMemoryManager(r.app.Now)
		sessions.SetOwner(r.app.Owner.ID())
	}
	if resuming {
		// Recovery may be about to mark this session, or its tasks, failed:
		// it goes first. A new session has nothing it could touch.
		if err := r.app.Settled(ctx); err != nil {
			return nil, fmt.Errorf("recover before resuming: %w", err)
		}
	}
	id := req.Resume
	if req.Continue {
		latest, err := r.app.Sessions.Latest(ctx, r.app.Cwd)
		if err != nil {
			return nil, fmt.Errorf("continue: no earlier session in %s: %w", r.app.Cwd, err)
		}
		id = latest.ID
	}
	switch {
	case resuming && (req.Fork || req.NoPersist):
		// The session is read, not reopened: it stays as it was.
		if sr.history, err = r.history(ctx, id); err != nil {
			return nil, err
		}
		newID := req.SessionID
		if !req.Fork {
			newID = id // kept in memory under its own id
		}
		if sr.sess, err = sessions.Create(ctx, session.Info{ID: newID, ParentID: "", Agent: "main", Cwd: r.app.Cwd, Title: title, Model: ref.String()}); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
		sr.recordHistory = true
	case resuming:
		sr.sess, sr.history, err = r.app.Sessions.Open(ctx, id)
		if err != nil {
			if req.Continue {
				return nil, fmt.Errorf("continue %s: %w", id, err)
			}
			return nil, fmt.Errorf("resume %s: %w", id, err)
		}
	default:
		sr.sess, err = sessions.Create(ctx, session.Info{ID: req.SessionID, Agent: "main", Cwd: r.app.Cwd, Title: title, Model: ref.String()})
		if err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	}
	sr.totals = &runner.Totals{}
	sr.system = r.systemPrompt()
	sr.fresh = !resuming || req.Fork
	return sr, nil
}

// history reads a session's conversation without reopening it.
func (r *Runtime) history(ctx context.Context, id string) ([]llm.Message, error) {
	if err := session.ValidateID(id); err != nil {
		return nil, fmt.Errorf("resume session: %w", err)
	}
	info, err := r.app.DB.GetSession(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	entries, _, err := r.app.Sessions.ReadTranscript(ctx, info)
	if err != nil {
		return nil, fmt.Errorf("resume %s: read its transcript: %w", id, err)
	}
	return session.Messages(entries), nil
}

// abandon ends a session that never ran (the conversation could not
// start).
func (sr *sessionRun) abandon() {
	if err := sr.sess.Finish(context.Background(), session.StatusFailed, llm.Usage{}, llm.Cost{}, 0); err != nil {
		sr.r.app.Log.Warn("end a session that could not start", "session", sr.sess.Info.ID, "err", err)
	}
}

// DefaultSystemPrompt is the main agent's system prompt when
// Options.SystemPrompt is empty: the base that Options.AppendSystemPrompt
// extends, before cadre adds the working directory, platform and date.
func DefaultSystemPrompt() string { return prompts.System }

func (r *Runtime) systemPrompt() string {
	sys := r.app.SystemPrompt
	if sys == "" {
		sys = prompts.System
	}
	extra := r.opts.AppendSystemPrompt
	if r.app.Coordinator {
		extra = strings.TrimSpace(claude.CoordinatorPrompt() + "\n\n" + extra)
	}
	return runner.SystemPrompt(sys, r.app.Cwd, r.app.Now(), extra)
}

func (sr *sessionRun) publish(e event.Event) {
	e.SessionID = sr.sess.Info.ID
	if e.UUID == "" {
		e.UUID = ids.New()
	}
	if e.Time.IsZero() {
		e.Time = sr.r.app.Now()
	}
	sr.r.app.Bus.Publish(e)
}

// publishInit publishes the system/init event.
func (sr *sessionRun) publishInit(model string, mode permission.Mode) {
	r := sr.r
	sr.publish(event.Event{Type: event.TypeSystem, Subtype: "init", Init: &event.Init{
		Cwd: r.app.Cwd, Tools: sr.tools.Names(), Model: model, PermissionMode: PermissionMode(mode),
		Version: Version(), APIKeySource: apiKeySource(sr.ref, r.app.Cfg.Personal.Providers, r.app.Getenv), Agents: r.agentNames(),
		SlashCommands: r.commandNames(command.KindCommand), Skills: r.commandNames(command.KindSkill),
		MCPServers: r.app.MCPInit(), AdditionalDirectories: r.app.Policy.AdditionalRoots(),
	}})
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

// runCommand runs a `context: fork` slash command (S-F2): a fork of the
// main agent continuing its conversation — the request its next turn would
// send, so the fork shares its prompt cache — whose calls are limited to
// the command's allowed-tools (an agent or model in the command runs it as
// that agent instead). In the foreground its final text is the command's
// output; with background: true it starts and its result comes back as a
// task notification. Either way the exchange is recorded in this session.
func (sr *sessionRun) runCommand(ctx context.Context, conv *runner.Conversation, cmd *command.Command, args, prompt string) *runner.Result {
	history := conv.History()
	lc := runner.LoopConfig(runner.Agent{Name: "main", System: sr.system, Tools: sr.tools, Thinking: sr.r.opts.Thinking})
	turn := &tool.Turn{
		Request: &llm.Request{System: lc.System, Messages: history, Tools: sr.tools.Specs(), MaxTokens: lc.MaxTokens, Thinking: lc.Thinking, Agent: lc.Agent},
		Tools:   sr.tools,
	}
	out, err := forkcmd.Run(ctx, sr.r.app.Subagents, sr.caller, forkcmd.CommandRun{
		Name: cmd.Name, Prompt: cmd.Expand(args), Agent: cmd.Agent, Model: cmd.Model,
		AllowedTools: cmd.AllowedTools, NoGrant: cmd.NoGrant, Turn: turn, History: history, Background: cmd.Background,
	})
	var res *runner.Result
	switch {
	case err != nil:
	case out.Launched:
		res = &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeSuccess,
			Result: fmt.Sprintf("/%s is running in the background (agentId: %s); its result will come as a task notification.", cmd.Name, out.AgentID)}}
	case out.Result == nil:
		err = errors.New("the command's run ended without a result")
	default:
		res = out.Result
	}
	if err != nil {
		res = &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}
	}
	return sr.exchange(conv, res, prompt, fmt.Sprintf("(/%s produced no output", cmd.Name))
}

// shellTemplate records a user's "!command" for the model; parsed on
// first use, it runs on tmplexec (see its doc.go).
var shellTemplate = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.New("shell").Parse(prompts.Shell)), nil)
})

// runShell runs the user's "!command" (Conversation.Shell) as the main
// agent's Bash call would run — hooks, permission layer, sandbox — and
// records the command and its output as the user's message; the turn's
// result is the output.
func (sr *sessionRun) runShell(ctx context.Context, conv *runner.Conversation, command string) *runner.Result {
	fail := func(err error) *runner.Result {
		return &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}, Status: session.StatusFailed}
	}
	if _, ok := sr.tools.Get(shellTool); !ok {
		return fail(fmt.Errorf("!%s: the main agent has no %s tool to run it with", command, shellTool))
	}
	input, err := json.Marshal(map[string]string{"command": command, "description": "The user's own command (!)"})
	if err != nil {
		return fail(err)
	}
	res, denied := conv.RunTool(ctx, llm.Block{Type: llm.BlockToolUse, ID: "shell_" + ids.New(), Name: shellTool, Input: input})
	output := res.ResultText()
	if denied {
		// Nothing ran: nothing joins the conversation.
		return fail(fmt.Errorf("!%s was not run: %s", command, output))
	}
	var text strings.Builder
	if err := shellTemplate().Execute(&text, map[string]any{"Command": command, "Output": strings.TrimRight(output, "\n"), "Failed": res.IsError}); err != nil {
		return fail(err)
	}
	if err := conv.Record(llm.UserText(strings.TrimSpace(text.String()))); err != nil {
		return fail(err)
	}
	return &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeSuccess, Result: output}, Status: session.StatusCompleted}
}

// shellTool is the tool a "!command" runs as.
const shellTool = "Bash"

// runAgent runs an agent directly (Conversation.RunAgent): a foreground
// child of the main agent, started without a model's call; its answer is
// recorded in this session as the answer to the user's "@name prompt".
func (sr *sessionRun) runAgent(ctx context.Context, conv *runner.Conversation, name, prompt string) *runner.Result {
	res, err := forkcmd.RunAgent(ctx, sr.r.app.Subagents, sr.caller, name, prompt, "direct_"+ids.New())
	if err == nil && res == nil {
		err = errors.New("the agent's run ended without a result")
	}
	if err != nil {
		res = &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}
	}
	return sr.exchange(conv, res, "@"+name+" "+prompt, fmt.Sprintf("(@%s produced no output", name))
}

// exchange records what the user asked outside the main agent's turns (a
// fork command, a direct agent run) and the answer, so that the main agent
// sees it next turn and a resumed session knows it happened; res becomes
// that turn's result. empty opens the answer's text when there is none.
func (sr *sessionRun) exchange(conv *runner.Conversation, res *runner.Result, prompt, empty string) *runner.Result {
	answer := res.Result
	if answer == "" {
		answer = empty
		if res.Err != nil {
			answer += ": " + res.Err.Error()
		}
		answer += ")"
	}
	if rerr := conv.Record(llm.UserText(prompt), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(answer)}}); rerr != nil && res.Err == nil {
		res.Err = rerr
	}
	res.Status = session.StatusCompleted
	if res.Err != nil {
		res.Status = session.StatusFailed
		res.Subtype = loop.SubtypeExecution
	}
	return res
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
	text := sr.r.app.Subagents.SystemContext(ctx, sr.caller)
	if stopped := sr.r.app.MCP.Manager().StoppedNotice(sr.mcpServers); stopped != "" {
		text = strings.TrimSpace(text + "\n\n" + stopped)
	}
	return text
}

// finish publishes the result: this session's turns, and the usage and cost
// of the whole run tree (subagents included).
func (sr *sessionRun) finish(res *runner.Result, totals *runner.Totals) {
	usage, cost, byModel := totals.Snapshot()
	out := &event.Result{
		IsError: res.Subtype != loop.SubtypeSuccess, Result: res.Result, NumTurns: res.Turns,
		Duration: sr.r.app.Now().Sub(sr.start), APIDuration: res.APIDuration, TotalCostUSD: cost,
		Usage: usage, StopReason: res.StopReason, ModelUsage: byModel,
		ModelUsageSinceLast: sinceLast(byModel, sr.counted),
	}
	sr.counted = byModel
	for _, d := range res.Denials {
		out.PermissionDenials = append(out.PermissionDenials, event.Denial{ToolName: d.Tool, ToolUseID: d.ToolUseID, ToolInput: d.Input})
	}
	// Read even when the conversation was stopped: the result says what
	// was spent.
	subagents, err := sr.subagentCosts(context.Background(), true)
	if err != nil {
		sr.r.app.Log.Warn("read the subagents' costs for the result", "session", sr.sess.Info.ID, "err", err)
	}
	out.Subagents = subagents
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

// apiKeySource names where the key of ref's requests comes from (a
// variable's name, never the key): a provider's own settings first, as
// the model was built.
func apiKeySource(ref provider.Ref, providers map[string]config.Provider, getenv func(string) string) string {
	if p, ok := providers[ref.Provider]; ok {
		switch {
		case p.APIKey != "":
			return "settings"
		case p.APIKeyEnv != "" && getenv(p.APIKeyEnv) != "":
			return p.APIKeyEnv
		case p.APIKeyEnv != "":
			return "none"
		}
	}
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
	for _, c := range r.app.Commands.All() {
		if c.Kind == kind {
			names = append(names, c.Name)
		}
	}
	return names
}

// sinceLast is now less before, model by model, every model of now listed
// (one that spent nothing since with zeros, as Claude Code lists it).
// Totals only grow, so no count goes below zero;
// a cost unknown on either side stays unknown.
func sinceLast(now, before map[string]event.ModelUsage) map[string]event.ModelUsage {
	out := map[string]event.ModelUsage{}
	for name, n := range now {
		b := before[name]
		u := llm.Usage{
			InputTokens: n.Usage.InputTokens - b.Usage.InputTokens, OutputTokens: n.Usage.OutputTokens - b.Usage.OutputTokens,
			CacheCreationInputTokens: n.Usage.CacheCreationInputTokens - b.Usage.CacheCreationInputTokens,
			CacheReadInputTokens:     n.Usage.CacheReadInputTokens - b.Usage.CacheReadInputTokens,
		}
		cost := llm.UnknownCost()
		nv, nk := n.CostUSD.USD()
		bv, bk := b.CostUSD.USD()
		if nk && bk {
			cost = llm.USD(nv - bv)
		}
		out[name] = event.ModelUsage{Usage: u, CostUSD: cost}
	}
	return out
}
