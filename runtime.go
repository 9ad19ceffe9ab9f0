package cadre

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/approval"
	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/version"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"go.opentelemetry.io/otel/trace"
)

// Version is cadre's version: a release's, else the module version (or
// "devel") the go command recorded in the binary (internal/version).
func Version() string { return version.Get().Version }

// Options configures a Runtime. Zero fields take the settings' values.
type Options struct {
	// Cwd is the working directory: the workspace, where project settings
	// are read and relative paths resolve. Default: the process's.
	Cwd string
	// Model names the main agent's model: "provider:model", an alias, or a
	// bare id ("claude-…", "gpt-…").
	Model string
	// LLM, if set, is the main agent's model, and Model is ignored: the
	// way to plug in a model cadre has no adapter for.
	LLM llm.Model
	// PermissionMode is the main agent's permission mode.
	PermissionMode PermissionMode
	// Agent names the agent definition the main agent runs as (Claude
	// Code's --agent): its prompt, tools, model and permission mode, the
	// last two unless Model/LLM and PermissionMode are set. An unknown
	// name makes New fail, listing the known agents.
	Agent string
	// Coordinator runs the main agent in coordinator mode (DESIGN S-A7;
	// --coordinator, subagents.coordinator and CADRE_COORDINATOR_MODE=1
	// turn it on too): it only orchestrates — its tools are Agent,
	// SendMessage, TaskStop, TaskOutput, the team's task list and
	// ListAgents; every Agent call runs in the background on its agent's
	// own model; forks are off (docs/agents.md). Under a surface profile
	// other than claude it is off, with a warning.
	Coordinator bool
	// AllowedTools and DisallowedTools add permission rules in Claude Code
	// syntax ("Bash(git diff:*)", "Edit"); a disallowed bare tool name
	// removes the tool from the model's pool.
	AllowedTools, DisallowedTools []string
	// MaxTurns bounds model calls per run; 0 keeps the settings' value
	// (whose 0 means no limit).
	MaxTurns int
	// FallbackModel names the model the main agent's calls switch to, for
	// the rest of the turn, when its model stays overloaded or unavailable
	// (529, 503, overloaded_error) after the provider's retries (Claude
	// Code's --fallback-model). It must differ from the main model.
	FallbackModel string
	// MaxBudgetUSD stops a conversation's turn, and every later one, once
	// the estimated cost of its whole run tree (subagents included)
	// reaches it: the result's subtype is then ResultMaxBudgetUSD. 0 means
	// no budget.
	MaxBudgetUSD float64
	// SettingSources are the settings files read, among "user", "project"
	// and "local" (Claude Code's --setting-sources); nil reads all.
	SettingSources []string
	// Settings is one more settings layer above the files: a file's path
	// or the settings as JSON text (Claude Code's --settings).
	Settings string
	// AdditionalDirectories are outside the working directory yet treated
	// as part of the workspace by the permission rules (--add-dir).
	AdditionalDirectories []string
	// ToolNames, when not nil, is the whole pool offered to the agents:
	// the built-in and Options.Tools tools with these names (or aliases),
	// and the Agent tool when it is named (Claude Code's --tools). An empty
	// non-nil list offers no tools.
	ToolNames []string
	// AgentsJSON declares subagents as Claude Code's --agents does: a JSON
	// object mapping names to definitions in the settings' "agents" form.
	// They win over files and settings of the same name.
	AgentsJSON json.RawMessage
	// MCPConfig adds MCP servers to those of the settings and .mcp.json:
	// each element is a JSON document {"mcpServers": {…}} or the path of a
	// file holding one (--mcp-config). StrictMCPConfig uses only these
	// (--strict-mcp-config). See docs/mcp.md.
	MCPConfig       []string
	StrictMCPConfig bool
	// IncludePartialMessages adds EventStreamEvent events: the main
	// agent's replies as they stream (--include-partial-messages).
	IncludePartialMessages bool
	// JSONSchema asks for the main agent's answer as JSON following this
	// schema (Claude Code's --json-schema): the agent gets a
	// StructuredOutput tool taking it, and the result's StructuredOutput
	// holds what it gave.
	JSONSchema json.RawMessage
	// Thinking turns on the main agent's extended thinking with this
	// budget (llm.ParseEffort reads the usual words); nil leaves it off.
	Thinking *llm.Thinking
	// SystemPrompt replaces cadre's default system prompt;
	// AppendSystemPrompt is added after it.
	SystemPrompt, AppendSystemPrompt string
	// Agents declares subagents in code; they win over every file and
	// setting of the same name. AgentFactories are called when the runtime
	// opens, for definitions built at run time. A declaration that is not
	// valid, or a factory that fails, makes New fail with an error naming
	// the agent and the field.
	Agents         []Agent
	AgentFactories []func() ([]Agent, error)
	// Permission is asked when a call needs approval. Nil means nobody can
	// approve, so such calls are denied with a reason the model sees.
	Permission PermissionFunc
	// Tools are added to the built-in tools: to the main agent's pool and
	// to the pools of subagents whose definitions allow them (all tools
	// when a definition lists none). A name a built-in tool has is an
	// error. Permission rules and modes judge them by their Info().Access,
	// as they judge built-ins.
	Tools []tool.Tool
	// Hooks are Go functions run on the runtime's events, for the main
	// agent and every subagent, beside the settings' command hooks and
	// with the same meaning (docs/hooks.md). An unknown event or a bad
	// matcher makes New fail.
	Hooks map[HookEvent][]HookMatcher
	// Logger receives what cadre cannot report through a result: failed
	// best-effort writes, a failed compaction, and at Debug how runs start
	// and end. Nil discards it.
	Logger *slog.Logger
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string
	// HTTPClient is used for provider requests; default http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// TracerProvider, if set, receives OpenTelemetry spans: one for each
	// agent run (the main agent's turn, each subagent's run, the child of
	// the Agent call that started it), each model call and each tool call
	// (docs/tracing.md). Nil makes none. The cadre command sets one up from
	// the OTEL_* environment variables.
	TracerProvider trace.TracerProvider
	// TrustWorkspace trusts the project's own files for this runtime
	// without asking or recording anything (cadre's --trust-workspace):
	// for automation that runs cadre in a repository it vouches for.
	// Without it, a project the user has not trusted (`cadre trust`,
	// TrustWorkspace) runs in the narrowed mode docs/security.md
	// describes: its files may only narrow what runs.
	TrustWorkspace bool
	// Ephemeral keeps nothing: the sessions, tasks and transcripts of the
	// runtime's runs go to a scratch directory removed by Close, and the
	// state dir (CADRE_HOME) is only read (settings, agents, trust), so
	// it may be read-only. `cadre -p --no-session-persistence` sets it;
	// resuming a stored session needs the store, so it ignores the flag.
	Ephemeral bool
	// Dispatch is where a background run executes with a PostgreSQL
	// store when the settings' store.dispatch does not say: DispatchSticky
	// (the default) or DispatchAny (cadre serve's). The SQLite store runs
	// every run where it starts.
	Dispatch Dispatch
}

// Approvals: what a tool call that needs approval asks, and the answer
// (package approval), under the SDK's names.
type (
	// PermissionRequest is a tool call that needs approval.
	PermissionRequest = approval.Request
	// FileChange is what an edit would do to one file, as an approval
	// shows it.
	FileChange = approval.FileChange
	// RuleDestination says where the rules of a RuleUpdate are kept.
	RuleDestination = approval.RuleDestination
	// RuleUpdate adds permission rules (allow, ask or deny) to a
	// destination.
	RuleUpdate = approval.RuleUpdate
	// PermissionDecision answers a PermissionRequest.
	PermissionDecision = approval.Decision
	// PermissionFunc decides a tool call that needs approval. It is
	// called concurrently; it should return when ctx ends.
	PermissionFunc = approval.Func
	// Approvals queues the permission requests of a conversation tree
	// for a front end that answers them one at a time.
	Approvals = approval.Approvals
	// Approval is one request waiting for an answer.
	Approval = approval.Approval
)

// The destinations of the Agent SDK's PermissionUpdate.
const (
	RulesSession = approval.RulesSession
	RulesLocal   = approval.RulesLocal
	RulesUser    = approval.RulesUser
	RulesProject = approval.RulesProject
)

// NewApprovals returns an empty queue.
func NewApprovals() *Approvals { return approval.NewApprovals() }

// ErrNotFound is wrapped by the errors of Session and Task about a record
// that does not exist.
var ErrNotFound = errors.New("not found")

// notFound keeps the store's message and adds ErrNotFound to what the
// error is.
type notFound struct{ err error }

func (e notFound) Error() string   { return e.err.Error() }
func (e notFound) Unwrap() []error { return []error{e.err, ErrNotFound} }

func wrapNotFound(err error) error {
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, task.ErrNotFound) {
		return notFound{err}
	}
	return err
}

// Runtime runs sessions in one working directory. It is safe for
// concurrent use; Close it when done.
type Runtime struct {
	opts Options
	// app is the runtime's parts, built by the composition root.
	app *app.App

	agentMu sync.Mutex // one CreateAgent at a time

	groupMu sync.Mutex
	groups  map[string]*subagent.Group // run trees in progress, by main session id

	// trust is the user's trust in the project, decided when it opened.
	trust WorkspaceTrust
}

// New opens a Runtime: it loads settings, validates them, and opens the
// session store under the state dir (CADRE_HOME, default ~/.cadre).
func New(ctx context.Context, opts Options) (*Runtime, error) {
	return newRuntime(ctx, opts, nil)
}

// newRuntime is New, with the hooks of a replay (replay.go) when replay is set:
// the runtime's every model and some of its tools then come from a
// recording. It checks what only the SDK knows (Options, the workspace's
// trust) and leaves the building to internal/app.
func newRuntime(ctx context.Context, opts Options, replay *app.Replay) (*Runtime, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	cwd := opts.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory %q: %w", opts.Cwd, err)
	}
	if st, err := os.Stat(cwd); err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("working directory %s is not a directory", cwd)
	}
	declared, factories, err := agent.Declarations(opts.Agents, opts.AgentFactories)
	if err != nil {
		return nil, err
	}
	ov := config.Overrides{
		Model: opts.Model, PermissionMode: string(opts.PermissionMode),
		AllowedTools: opts.AllowedTools, DisallowedTools: opts.DisallowedTools,
		AdditionalDirectories: opts.AdditionalDirectories, Settings: opts.Settings, Agents: opts.AgentsJSON,
	}
	if opts.MaxTurns != 0 {
		if opts.MaxTurns < 0 {
			return nil, fmt.Errorf("max turns must be positive, got %d", opts.MaxTurns)
		}
		mt := opts.MaxTurns
		ov.MaxTurns = &mt
	}
	wt, _, err := assessWorkspace(Options{Cwd: cwd, Getenv: getenv, SettingSources: opts.SettingSources, TrustWorkspace: opts.TrustWorkspace})
	if err != nil {
		return nil, err
	}
	hooks, err := hook.FromFuncs(opts.Hooks)
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, app.Config{
		Cwd: cwd, Getenv: getenv, Now: now, Logger: logger(opts.Logger), Version: Version(),
		TracerProvider: opts.TracerProvider, HTTPClient: opts.HTTPClient,
		Overrides: ov, SettingSources: opts.SettingSources, Trusted: wt.Trusted, TrustWarning: wt.Warning(),
		LLM: opts.LLM, Agent: opts.Agent, SystemPrompt: opts.SystemPrompt, PermissionMode: string(opts.PermissionMode),
		FallbackModel: opts.FallbackModel, MaxBudgetUSD: opts.MaxBudgetUSD, JSONSchema: opts.JSONSchema,
		Coordinator: opts.Coordinator, Tools: opts.Tools, ToolNames: opts.ToolNames, Hooks: hooks,
		Declared: declared, Factories: factories, MCPConfig: opts.MCPConfig, StrictMCPConfig: opts.StrictMCPConfig,
		Ephemeral: opts.Ephemeral, Dispatch: string(opts.Dispatch), Replay: replay,
	})
	if err != nil {
		return nil, err
	}
	return &Runtime{opts: opts, app: a, groups: map[string]*subagent.Group{}, trust: wt}, nil
}

// Background moves every foreground subagent of the session's running
// tree to the background (what Ctrl+B does in an interactive session): each
// one's Agent call returns async_launched at once and its result arrives
// later as a notification. It returns how many were moved.
func (r *Runtime) Background(sessionID string) int {
	r.groupMu.Lock()
	g := r.groups[sessionID]
	r.groupMu.Unlock()
	if g == nil {
		return 0
	}
	return g.Background()
}

// StopTask stops a background task, in this process or, through its
// record, in the process that runs it; its error wraps ErrNotFound when
// there is no such task.
func (r *Runtime) StopTask(ctx context.Context, id string) (string, error) {
	if err := r.app.Settled(ctx); err != nil {
		return "", err
	}
	msg, err := r.app.Subagents.Stop(ctx, id)
	return msg, wrapNotFound(err)
}

// Tasks lists task records, newest first: the tasks of the run tree of
// the main session rootSessionID, or all of them when it is "". A limit
// of 0 lists them all.
func (r *Runtime) Tasks(ctx context.Context, rootSessionID string, limit int) ([]Task, error) {
	if err := r.app.Settled(ctx); err != nil {
		return nil, err
	}
	return r.app.Tasks(ctx, rootSessionID, limit)
}

// Task returns one task record; its error wraps ErrNotFound when there is
// none.
func (r *Runtime) Task(ctx context.Context, id string) (Task, error) {
	if err := task.ValidateID(id); err != nil {
		return Task{}, err
	}
	if err := r.app.Settled(ctx); err != nil {
		return Task{}, err
	}
	t, err := r.app.Task(ctx, id)
	return t, wrapNotFound(err)
}

// TaskOutput is the log of task id: its output file as text. The file of
// a run started in the background is its transcript (a second name of
// it), whose log is rendered; with transcripts in the store (PostgreSQL)
// there is no file and the log is rendered from the transcript there, so
// any node shows it. A finished run's ends with its status and result.
func (r *Runtime) TaskOutput(ctx context.Context, id string) (string, error) {
	if err := task.ValidateID(id); err != nil {
		return "", err
	}
	if err := r.app.Settled(ctx); err != nil {
		return "", err
	}
	t, err := r.app.DB.GetTask(ctx, id)
	if err != nil {
		return "", wrapNotFound(err)
	}
	return r.app.Subagents.Output(ctx, t)
}

// Agents lists every subagent definition found, in load order, with where
// it came from, whether it is in effect, and why not.
func (r *Runtime) Agents() []AgentEntry {
	return convert(r.app.Agents.Entries(), agent.Entry.Public)
}

// Agent returns the definition in effect for name (case ignored).
func (r *Runtime) Agent(name string) (Agent, bool) {
	d, ok := r.app.Agents.Get(name)
	if !ok {
		return Agent{}, false
	}
	return d.Public(), true
}

// errRuntimeClosed stops the run trees of conversations still open when
// the runtime closes.
var errRuntimeClosed = errors.New("the runtime was closed")

// Close stops what is still running, releases the owner lock and closes
// the store.
func (r *Runtime) Close() error {
	// The start-up work ends first: it may still use what the runs use.
	_ = r.app.Settled(context.Background())
	// The trees of conversations still open stop too: their background
	// commands are process groups that must not outlive the runtime.
	r.groupMu.Lock()
	for _, g := range r.groups {
		g.Stop(errRuntimeClosed)
	}
	r.groupMu.Unlock()
	// Then the parts, in the reverse of their building (internal/app).
	return r.app.Close()
}

// Warnings are the non-fatal problems found in the settings (unknown keys).
func (r *Runtime) Warnings() []string {
	<-r.app.Reported()
	out := make([]string, 0, len(r.app.Cfg.Warnings)+len(r.app.Warnings))
	for _, w := range r.app.Cfg.Warnings {
		out = append(out, w.String())
	}
	return append(out, r.app.Warnings...)
}

// Trust is the user's trust in the project, as decided when the runtime
// opened (AssessWorkspace).
func (r *Runtime) Trust() WorkspaceTrust { return r.trust }

// PermissionMode is the main agent's mode from the settings and flags:
// what a run gets when it names none.
func (r *Runtime) PermissionMode() PermissionMode { return PermissionMode(r.app.Policy.Mode) }

// Cwd is the runtime's working directory.
func (r *Runtime) Cwd() string { return r.app.Cwd }

// Sessions lists sessions, newest first: those whose working directory is
// cwd, or all of them when cwd is "". A limit of 0 lists them all.
func (r *Runtime) Sessions(ctx context.Context, cwd string, limit int) ([]Session, error) {
	if err := r.app.Settled(ctx); err != nil {
		return nil, err
	}
	infos, err := r.app.DB.ListSessions(ctx, session.Filter{Cwd: cwd, Limit: limit})
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// Session returns one session's record and its transcript; its error
// wraps ErrNotFound when there is no such session.
func (r *Runtime) Session(ctx context.Context, id string) (Session, []TranscriptEntry, error) {
	if err := session.ValidateID(id); err != nil {
		return Session{}, nil, err
	}
	if err := r.app.Settled(ctx); err != nil {
		return Session{}, nil, err
	}
	info, err := r.app.DB.GetSession(ctx, id)
	if err != nil {
		return Session{}, nil, wrapNotFound(err)
	}
	entries, _, err := r.app.Sessions.ReadTranscript(ctx, info)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return info, nil, err
	}
	return info, entries, nil
}

// convert converts records for SDK users, one by one; nil stays nil.
func convert[In, Out any](in []In, of func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		out[i] = of(v)
	}
	return out
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// agentNames lists the subagents the main agent could be offered, for the
// init line.
func (r *Runtime) agentNames() []string {
	var names []string
	for _, d := range r.app.Agents.All() {
		if d.Mode != "primary" {
			names = append(names, d.Name)
		}
	}
	return names
}
