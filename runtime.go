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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/internal/cluster"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/contextfiles"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/skill"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/structured"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/profiles"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/trust"
	"github.com/cadre-dev/cadre/internal/version"
	"github.com/cadre-dev/cadre/internal/worktree"
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

// PermissionRequest is a tool call that needs approval.
type PermissionRequest struct {
	Tool      string
	Target    string // the path or command the call touches
	Input     json.RawMessage
	SessionID string // the asking agent's session
	ToolUseID string
	Reason    string // why the call needs approval
	// Agent is "main" or the asking subagent's type; AgentID its session
	// id ("" for main); ParentToolUseID the Agent call that started it
	// ("" for main). A request from any depth names its own agent.
	Agent, AgentID, ParentToolUseID string
	// Suggestions are the allow rules that PermissionDecision.Remember
	// would add to approve such calls for the rest of the conversation, in
	// permission-rule syntax: "Bash(npm test:*)", "Edit(//abs/dir/**)",
	// "WebFetch". None when no rule could approve the call (an ask rule
	// asks every time; a change of .git, .cadre or .claude always asks).
	Suggestions []string
	// ExactRules are allow rules that approve this very call and no wider
	// one (a Bash call: each simple command as written), what an approval
	// "for this project" saves; none when no rule could.
	ExactRules []string
	// Edits says the call changes files, so accepting edits for the
	// session (PermissionAcceptEdits) would approve it.
	Edits bool
	// Change is what the call would do to a file, for the tools that can
	// tell before they run (Edit, Write); nil for other calls.
	Change *FileChange
}

// FileChange is what an edit would do to one file, as an approval shows
// it.
type FileChange struct {
	Path string
	// Create: the file does not exist yet.
	Create bool
	// Old and New are the file's text before and after ("" before a
	// create), and Diff the change as a unified diff ("--- /dev/null" for
	// a create). Diff is empty when the change is too large to diff; Old
	// and New are empty then too, and when together they pass 1 MiB.
	Old, New, Diff string
}

// RuleDestination says where the rules of a RuleUpdate are kept.
type RuleDestination string

// The destinations of the Agent SDK's PermissionUpdate.
const (
	// RulesSession: this conversation's tree, as PermissionDecision.Remember.
	RulesSession RuleDestination = "session"
	// RulesLocal: the project's untracked .cadre/settings.local.json.
	RulesLocal RuleDestination = "localSettings"
	// RulesUser: the user's $CADRE_HOME/settings.json.
	RulesUser RuleDestination = "userSettings"
	// RulesProject: the project's shared .cadre/settings.json, which cadre
	// never writes: it is the repository's, and a rule there would reach
	// everyone who clones it.
	RulesProject RuleDestination = "projectSettings"
)

// RuleUpdate adds permission rules (allow, ask or deny) to a destination.
type RuleUpdate struct {
	Destination RuleDestination
	Behavior    string
	Rules       []string
}

// PermissionDecision answers a PermissionRequest.
type PermissionDecision struct {
	Allow bool
	// UpdatedInput, on an allow, is the input the call runs with instead
	// of the model's. It must pass the tool's schema and is checked again
	// against the deny rules (a deny rule still wins); the transcript
	// records it.
	UpdatedInput json.RawMessage
	// Message, on a denial, is what the model is told.
	Message string
	// Interrupt, on a denial, also ends the asking agent's turn after the
	// denial is recorded (the SDK's interrupt: true).
	Interrupt bool
	// Remember, on an allow, adds allow rules (PermissionRequest's
	// Suggestions, or others) for the rest of this conversation's tree:
	// its main agent and every subagent, never another conversation. They
	// count as allow rules: deny and ask rules, plan mode and protected
	// paths still hold.
	Remember []string
	// Save, on an allow, adds rules to settings files before the call
	// runs, creating the file if needed; saved allow rules also count for
	// the rest of this conversation, as Remember's. A destination cadre
	// will not write (RulesProject), a local settings file that git tracks
	// or that is a link, or a file that cannot be written fails the call
	// with an error saying which.
	Save []RuleUpdate
}

// PermissionFunc decides a tool call that needs approval. It is called
// concurrently: parallel subagents, and parallel calls of one agent, ask
// at once. It should return when ctx ends.
type PermissionFunc func(ctx context.Context, req PermissionRequest) (PermissionDecision, error)

// asker puts a PermissionFunc behind the policy's question, after the
// Notification hooks (a permission prompt is one of Claude Code's).
type asker struct {
	f PermissionFunc
	r *Runtime
}

func (a asker) Ask(ctx context.Context, q permission.Question) (permission.Answer, error) {
	a.r.notify(ctx, q)
	d, err := a.f(ctx, PermissionRequest{
		Tool: q.Tool, Target: q.Target, Input: q.Input, SessionID: q.SessionID, ToolUseID: q.ToolUseID, Reason: q.Reason,
		Agent: q.Agent, AgentID: q.AgentID, ParentToolUseID: q.ParentToolUseID, Suggestions: q.Suggestions,
		ExactRules: q.Exact, Edits: q.Edits, Change: fileChange(q.Change),
	})
	if err != nil {
		return permission.Answer{}, err
	}
	remember := d.Remember
	if d.Allow {
		saved, err := a.r.saveRules(d.Save)
		if err != nil {
			return permission.Answer{}, err
		}
		remember = append(slices.Clip(remember), saved...)
	}
	return permission.Answer{Allow: d.Allow, UpdatedInput: d.UpdatedInput, Message: d.Message, Interrupt: d.Interrupt, Remember: remember}, nil
}

// fileChange is the runtime's view of a question's change.
func fileChange(c *permission.Change) *FileChange {
	if c == nil {
		return nil
	}
	return &FileChange{Path: c.Path, Create: c.Create, Old: c.Old, New: c.New, Diff: c.Diff}
}

// saveRules writes the rule updates of an approval to their settings
// files, and returns the allow rules among them, which hold for the rest
// of the conversation too.
func (r *Runtime) saveRules(updates []RuleUpdate) (allow []string, err error) {
	for _, u := range updates {
		if u.Behavior == "allow" {
			allow = append(allow, u.Rules...)
		}
		if len(u.Rules) == 0 {
			continue
		}
		switch u.Destination {
		case RulesSession:
			if u.Behavior != "allow" {
				return nil, fmt.Errorf("cannot add %s rules for the session: only allow rules are kept per session; save them to localSettings or userSettings", u.Behavior)
			}
		case RulesLocal:
			path := config.LocalSettingsPath(r.cwd)
			if err := config.CheckLocal(r.cwd, path); err != nil {
				return nil, err
			}
			if err := config.AddRules(path, u.Behavior, u.Rules); err != nil {
				return nil, err
			}
		case RulesUser:
			if err := config.AddRules(config.UserSettingsPath(r.cfg.Home), u.Behavior, u.Rules); err != nil {
				return nil, err
			}
		case RulesProject:
			return nil, fmt.Errorf("cannot save %s to projectSettings: cadre does not write the project's shared settings, which belong to the repository; save them to localSettings (untracked) or userSettings", strings.Join(u.Rules, ", "))
		default:
			return nil, fmt.Errorf("cannot save %s: unknown destination %q (want session, localSettings, userSettings)", strings.Join(u.Rules, ", "), u.Destination)
		}
	}
	return allow, nil
}

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
	// replay is set when Replay opened the runtime (replay.go).
	replay *replayHooks
	// sandbox starts every process for the model (sandbox.go).
	sandbox  *sandbox.Runner
	cwd      string
	cfg      *config.Loaded
	db       recordStore
	sessions *session.Manager
	bus      *event.Bus
	policy   permission.Policy
	pricing  provider.Pricing
	getenv   func(string) string
	now      func() time.Time
	log      *slog.Logger
	tracer   telemetry.Tracer

	baseTools []tool.Tool // the built-in tools and Options.Tools
	// ownSkill says baseTools holds cadre's Skill tool (not one of
	// Options.Tools): the main agent's forks its context: fork skills.
	ownSkill bool
	// coordinator says the main agent runs in coordinator mode.
	coordinator bool
	commands    *command.Set
	// grants are the allow rules sessions gained by invoking skills.
	grants *permission.Grants
	// context is the context files' block every conversation opens with.
	context   []llm.Block
	warnings  []string // problems found while loading agents and commands
	agents    *agent.Registry
	agentLoad agent.LoadOptions // how agents was loaded: CreateAgent loads again
	agentMu   sync.Mutex        // one CreateAgent at a time
	subagents *subagent.Service
	hooks     *hook.Engine // nil when no hook is set
	mcp       *mcpState
	queue     *queue.Queue
	owner     *task.Owner
	// node is this process's membership of the cluster of processes
	// sharing a PostgreSQL store (River); nil with the SQLite store.
	node *cluster.Node

	// reported is closed once the worktree report is in warnings;
	// settledCh once all of settle's work is done, with settleErr set.
	reported, settledCh chan struct{}
	settleErr           error

	// runDir holds the owner locks of this CADRE_HOME's processes.
	runDir string
	// scratch is an ephemeral runtime's state, removed by Close.
	scratch string

	groupMu sync.Mutex
	groups  map[string]*subagent.Group // run trees in progress, by main session id

	// defaultModel is set when no flag or setting named the main model,
	// so config.DefaultModel is used: its errors say so.
	defaultModel bool
	// mainAgent is the definition the main agent runs as (Options.Agent).
	mainAgent *agent.Definition
	// trust is the user's trust in the project, decided when it opened.
	trust WorkspaceTrust

	modelMu sync.Mutex
	models  map[string]resolved // by name: spawning must not rebuild SDK clients
	// noticed holds the deprecated models ("provider:id") the user was
	// already warned of: once each.
	noticed map[string]bool
}

type resolved struct {
	model llm.Model
	ref   provider.Ref
}

// New opens a Runtime: it loads settings, validates them, and opens the
// session store under the state dir (CADRE_HOME, default ~/.cadre).
func New(ctx context.Context, opts Options) (*Runtime, error) {
	return newRuntime(ctx, opts, nil)
}

// newRuntime is New, with the hooks of a replay (replay.go) when replay is set:
// the runtime's every model and some of its tools then come from a
// recording.
func newRuntime(ctx context.Context, opts Options, replay *replayHooks) (*Runtime, error) {
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
	declared, factories, err := declarations(opts)
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
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, Getenv: getenv, Sources: opts.SettingSources, Overrides: ov, Trusted: wt.Trusted})
	if err != nil {
		return nil, err
	}
	if opts.MaxBudgetUSD < 0 {
		return nil, fmt.Errorf("max budget must be positive, got %g USD", opts.MaxBudgetUSD)
	}
	if fb := strings.TrimSpace(opts.FallbackModel); fb != "" && fb == cfg.Settings.Model {
		return nil, fmt.Errorf("fallback model %q is the main model: name a different model", fb)
	}
	defaultModel := cfg.Settings.Model == ""
	if defaultModel {
		cfg.Settings.Model = config.DefaultModel
	}
	if len(opts.JSONSchema) > 0 {
		// Checked now: a bad schema is a start failure, not a run's.
		if _, err := structured.New(opts.JSONSchema); err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
	}
	s := cfg.Settings
	mode := permission.ModeDefault
	if s.Permissions.DefaultMode != "" {
		if mode, err = permission.ParseMode(s.Permissions.DefaultMode); err != nil {
			return nil, err
		}
	}
	rules, err := s.Rules()
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	r := &Runtime{
		opts: opts, replay: replay, cwd: cwd, cfg: cfg, bus: &event.Bus{}, getenv: getenv, now: now, log: logger(opts.Logger),
		tracer: telemetry.New(opts.TracerProvider, Version()),
		policy: permission.Policy{
			Mode: mode, Rules: rules, Task: s.Permissions.Task, Workspace: cwd, Project: cwd,
			AdditionalDirs: s.Permissions.AdditionalDirectories, Home: home, ConfigDirs: []string{cfg.Home},
		},
		models: map[string]resolved{}, defaultModel: defaultModel, trust: wt,
	}
	if w := wt.Warning(); w != "" {
		r.warnings = append(r.warnings, w)
	}
	// The launch text points the model to its task's output file, under
	// CADRE_HOME and so outside the workspace. The service, made below
	// (with this policy), knows which files are whose.
	r.policy.ReadableFile = func(ctx context.Context, sessionID, path string) bool {
		return r.subagents != nil && r.subagents.OwnOutput(ctx, sessionID, path)
	}
	r.sandbox = newSandbox(cwd, home, cfg, rules)
	// Every command started for a model (Bash, hooks, MCP servers) runs
	// without the variables that hold provider keys: a child on its own
	// account must not be able to print its key, or the main one.
	r.sandbox.HideEnv = provider.KeyVariables(r.providerConfig())
	switch {
	case r.sandbox.Mode == sandbox.ModeAuto && !r.sandbox.Status.Available():
		r.warnings = append(r.warnings, "the sandbox is unavailable, so commands run under the permission rules alone: "+r.sandbox.Status.Reason+
			" (set sandbox.mode to \"required\" to refuse them instead, or \"off\" to silence this; see `cadre sandbox status`)")
	case r.sandbox.Active() && s.Sandbox.AutoAllowBashIfSandboxed:
		r.policy.Sandboxed = r.sandbox.Sandboxes
	}
	// The asker is each conversation's (Options.Permission, or its
	// OpenRequest's): r.policy has none, so nothing asks through it.
	r.pricing.Overrides = map[string]provider.Price{}
	for name, p := range s.Pricing {
		r.pricing.Overrides[name] = provider.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	// A deprecated main model is told at start, with the other warnings;
	// a retired one fails its first run with the replacement named.
	if pc := r.providerConfig(); opts.LLM == nil {
		if ref, err := provider.Parse(s.Model, pc); err == nil {
			if w := r.notice(pc, ref); w != "" {
				r.warnings = append(r.warnings, w)
			}
		}
	}
	dispatchTo, err := dispatchMode(s.Store.Dispatch, opts.Dispatch)
	if err != nil {
		return nil, err
	}
	// state is where the runtime writes: the state dir, or a scratch
	// directory of an ephemeral runtime.
	state, storeURL, storeEnv := cfg.Home, s.Store.URL, getenv
	opened := false // set once New returns the runtime
	if opts.Ephemeral {
		if state, err = os.MkdirTemp("", "cadre-ephemeral-"); err != nil {
			return nil, fmt.Errorf("ephemeral runtime: %w", err)
		}
		r.scratch = state
		defer func() {
			if !opened {
				os.RemoveAll(state)
			}
		}()
		// No PostgreSQL either: an ephemeral run shares nothing.
		storeURL, storeEnv = "", func(string) string { return "" }
	}
	if r.db, err = openStore(ctx, state, storeURL, storeEnv, r.log); err != nil {
		return nil, err
	}
	runDir := filepath.Join(state, "run")
	r.runDir = runDir
	if r.owner, err = task.ClaimOwner(runDir); err != nil {
		r.db.Close()
		return nil, fmt.Errorf("claim the task owner lock: %w", err)
	}
	r.sessions = session.NewManagerWith(r.db, transcriptsOf(r.db, state, r.owner.ID(), s.Store.OrphanAfter()), now, nil)
	r.sessions.SetOwner(r.owner.ID())
	r.queue = &queue.Queue{}
	r.groups = map[string]*subagent.Group{}

	var env []string
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	if r.baseTools, err = withTools(builtin.Tools(builtin.Options{
		Env: env, Sandbox: r.sandbox,
		// Off by default: a model's fetch must not reach the user's machine
		// or network (docs/settings.md); tests and local setups turn it on.
		WebFetchAllowPrivate: getenv("CADRE_WEBFETCH_ALLOW_PRIVATE") == "1",
	}), opts.Tools); err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	if r.hooks, err = r.hookEngine(env); err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	r.baseTools = slices.DeleteFunc(r.baseTools, func(t tool.Tool) bool { return !offered(t, opts.ToolNames) })
	if replay != nil && replay.tools != nil {
		r.baseTools = replay.tools(r.baseTools)
	}
	var problems []command.Problem
	r.commands, problems = command.Load(cwd, cfg.Home)
	if !wt.Trusted {
		r.commands = r.commands.Narrowed(func(c *command.Command) { trust.NarrowCommand(c) })
	}
	for _, p := range problems {
		r.warnings = append(r.warnings, "command "+p.Error())
	}
	for _, c := range r.commands.All() {
		for _, w := range c.Warnings {
			r.warnings = append(r.warnings, fmt.Sprintf("command %s: %s", c.Path, w))
		}
	}
	// The Skill tool lists the skills it can load, so it exists once they
	// are loaded, and only when there are some; it obeys --tools as the
	// built-ins do.
	r.grants = &permission.Grants{}
	r.policy.Grants = r.grants
	if st := skill.Tool(r.commands, r.grants, nil); st != nil && offered(st, opts.ToolNames) && !hasTool(r.baseTools, skill.Name) {
		r.baseTools = append(r.baseTools, st)
		r.ownSkill = true
	}
	files, ctxProblems := contextfiles.Load(contextfiles.Options{Cwd: cwd, Home: home, StateDir: cfg.Home})
	for _, p := range ctxProblems {
		r.warnings = append(r.warnings, "context file "+p)
	}
	r.context = contextfiles.Blocks(files)
	// A factory is called once: a reload (CreateAgent) reuses its answer.
	for i, f := range factories {
		factories[i] = sync.OnceValues(f)
	}
	r.agentLoad = agent.LoadOptions{
		Cwd: cwd, UserDir: filepath.Join(cfg.Home, "agents"),
		Settings: s.Agents, SettingsFile: "settings (agents)",
		Declared: declared, Factories: factories,
		KnownProvider: r.providerConfig().Known,
	}
	if !wt.Trusted {
		r.agentLoad.Narrow = func(d *agent.Definition) { trust.NarrowAgent(d) }
	}
	r.agents = agent.Load(r.agentLoad)
	if err := sdkProblems(r.agents); err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	if err := r.asMainAgent(); err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	// A broken or mistyped agent file is reported by every run, not only
	// by `cadre agents`: once per file, with file:line.
	r.warnings = append(r.warnings, r.agents.Report()...)
	if err := r.openMCP(); err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	r.coordinator = r.opts.Coordinator || s.Subagents.Coordinator || forkEnv(getenv("CADRE_COORDINATOR_MODE"))
	if surface := s.Subagents.Surface; r.coordinator && surface != "" && surface != config.SurfaceClaude {
		// Its tools are the claude profile's: under another profile the
		// main agent would keep nothing to orchestrate with.
		r.warnings = append(r.warnings, fmt.Sprintf("coordinator mode needs subagents.surface %q, not %q: it is off", config.SurfaceClaude, surface))
		r.coordinator = false
	}
	mailbox, watch := crossProcess(r.db)
	worker := dispatchWorker(r.db, dispatchTo)
	// The tool surface (DESIGN §12) is a package of its own.
	profile, err := profiles.For(s.Subagents.Surface)
	if err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	r.subagents, err = subagent.New(subagent.Config{
		Profile: profile,
		Bus:     r.bus, Now: now, Sessions: r.sessions, Index: r.db, Agents: r.agents,
		Settings: s.Subagents, Policy: r.policy, Resolve: r.model, Pricing: r.pricing, CheckPrice: r.checkPrice(),
		ParseModel: func(name string) (provider.Ref, error) { return provider.Parse(name, r.providerConfig()) },
		// A child gets the MCP tools connected when it spawns: a server
		// that stopped is gone from later pools.
		BaseTools: func() []tool.Tool { return slices.Concat(r.baseTools, r.mcpTools()) }, MainCwd: cwd,
		MCP:   mcpForAgents{r},
		Tasks: r.db, Queue: r.queue, Owner: r.owner.ID(), OutputDir: filepath.Join(state, "tasks"),
		ShellMaxOutputBytes: s.BackgroundShell.MaxOutputBytes,
		Mailbox:             mailbox, Watch: watch,
		// A coordinator never forks (S-F1).
		Fork:        (s.Subagents.Fork || forkEnv(getenv("CADRE_FORK_SUBAGENT"))) && !r.coordinator,
		Coordinator: r.coordinator,
		// Claude Code's own switch turns cadre's teams on too.
		Teams:             s.Subagents.Teams || forkEnv(getenv("CADRE_AGENT_TEAMS")) || forkEnv(getenv("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS")),
		TaskLists:         r.db,
		Compaction:        compaction(s.Compaction),
		MaxToolInputBytes: s.Limits.MaxToolInputBytes,
		ContextFiles:      files,
		Commands:          r.commands,
		Logger:            r.log,
		Hooks:             r.hooks,
		ProjectHooks:      cfg.ProjectHooks(),
		DisableAllHooks:   s.DisableAllHooks,
		Tracer:            r.tracer,
		Dispatch:          dispatcher(r, worker),
	})
	if err != nil {
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	if r.node, err = startNode(ctx, r.db, r.owner.ID(), s.Store, r.log, worker, s.Subagents.Lane()); err != nil {
		r.subagents.Close()
		r.mcp.manager.Close()
		r.owner.Close()
		r.db.Close()
		return nil, err
	}
	if worker != nil {
		worker.Bind(r.subagents)
	}
	r.settle(context.WithoutCancel(ctx), runDir)
	r.log.Debug("runtime opened", "cwd", cwd, "state_dir", cfg.Home, "scratch", r.scratch, "model", s.Model, "tools", len(r.baseTools))
	opened = true
	return r, nil
}

// settle starts, in a goroutine the Runtime owns (Close waits for it), the
// start-up work that no new run needs before its first model request: the
// report of leftover worktrees, the recovery of what ended processes left
// running, and the archive sweep. What needs their result waits: Warnings
// for the report; resuming or continuing a session, and listing or reading
// sessions and tasks, for all of it (see settled).
func (r *Runtime) settle(ctx context.Context, runDir string) {
	r.reported, r.settledCh = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.settledCh)
		r.reportWorktrees(ctx, runDir)
		close(r.reported)
		err := r.recover(ctx, runDir)
		// Archiving is swept whenever cadre opens its store: no process has
		// to stay up for archiveAfterMinutes (S-S3).
		if _, serr := r.subagents.Sweep(ctx, r.now()); serr != nil {
			err = errors.Join(err, fmt.Errorf("archive finished subagent sessions: %w", serr))
		}
		if err != nil {
			// A new run does not wait for this work, and a CLI that ends
			// with Close does not read its error: the logger must hear it.
			r.log.WarnContext(ctx, "start-up recovery and archive sweep", "err", err)
		}
		r.settleErr = err
	}()
}

// settled waits until the start-up work of settle is done and returns its
// error, or ctx's.
func (r *Runtime) settled(ctx context.Context) error {
	select {
	case <-r.settledCh:
		return r.settleErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recover fails the tasks a crashed cadre left running, with their child
// sessions, and the other sessions such processes left running. Every
// runtime runs it (in settle), so nothing stays "running" after a crash.
// With SQLite a process has ended when its owner lock is free; with
// PostgreSQL, shared by processes on many machines, when its node record
// says it left or went silent (cluster.Sweep, which the cluster's leader
// also runs periodically), or when it was a process of this CADRE_HOME
// whose lock is free.
func (r *Runtime) recover(ctx context.Context, runDir string) error {
	if r.node != nil {
		// A lock file of this CADRE_HOME left free is a process of this
		// machine that crashed: its work need not wait for the timeout.
		ended := func(owner string) bool { return task.Ended(runDir, owner) }
		_, err := cluster.Sweep(ctx, r.db.(*postgres.DB), r.node.OrphanAfter(), ended)
		if err != nil {
			return fmt.Errorf("recover the work of lost nodes: %w", err)
		}
		return nil
	}
	orphans, terr := task.Recover(ctx, r.db, runDir, r.now())
	if terr != nil {
		terr = fmt.Errorf("recover tasks of ended processes: %w", terr)
	}
	var children []string
	for _, t := range orphans {
		if t.ChildSessionID != "" {
			children = append(children, t.ChildSessionID)
		}
	}
	alive := func(owner string) bool { return task.Alive(runDir, owner) }
	_, serr := session.Recover(ctx, r.db, alive, children, r.now())
	if serr != nil {
		serr = fmt.Errorf("recover sessions of ended processes: %w", serr)
	}
	return errors.Join(terr, serr)
}

// reportWorktrees warns about subagent worktrees of this repository that
// no running task owns: left by a run that could not settle them (a crash).
// They hold work, so they are reported, never removed.
func (r *Runtime) reportWorktrees(ctx context.Context, runDir string) {
	trees, err := worktree.Sweep(ctx, r.cwd)
	if err != nil {
		return // not a git repository, or no git: nothing to report
	}
	for _, t := range trees {
		name := filepath.Base(t.Path)
		// Recovery may not have failed the task of a crashed run yet: its
		// owner's lock or node record says whether the run is still going,
		// in some process.
		if rec, err := r.db.GetTask(ctx, name); err == nil && !rec.Status.Terminal() && r.ownerAlive(ctx, runDir, rec.Owner) {
			continue
		}
		r.warnings = append(r.warnings, fmt.Sprintf("subagent worktree %s (branch %s) was left by an earlier run; review it, then remove it with git worktree remove", t.Path, t.Branch))
	}
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
	if err := r.settled(ctx); err != nil {
		return "", err
	}
	msg, err := r.subagents.Stop(ctx, id)
	return msg, wrapNotFound(err)
}

// Tasks lists task records, newest first: the tasks of the run tree of
// the main session rootSessionID, or all of them when it is "". A limit
// of 0 lists them all.
func (r *Runtime) Tasks(ctx context.Context, rootSessionID string, limit int) ([]Task, error) {
	if err := r.settled(ctx); err != nil {
		return nil, err
	}
	ts, err := r.db.ListTasks(ctx, task.Filter{RootSessionID: rootSessionID, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := convert(ts, taskOf)
	for i := range out {
		if err := r.withSession(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// withSession adds what t's child session records (its model and turns),
// when it has one.
func (r *Runtime) withSession(ctx context.Context, t *Task) error {
	if t.ChildSessionID == "" {
		return nil
	}
	info, err := r.db.GetSession(ctx, t.ChildSessionID)
	if errors.Is(err, session.ErrNotFound) {
		return nil // still waiting for a place in its lane
	} else if err != nil {
		return fmt.Errorf("task %s: read its session: %w", t.ID, err)
	}
	t.Model, t.NumTurns = info.Model, info.NumTurns
	return nil
}

// Task returns one task record; its error wraps ErrNotFound when there is
// none.
func (r *Runtime) Task(ctx context.Context, id string) (Task, error) {
	if err := task.ValidateID(id); err != nil {
		return Task{}, err
	}
	if err := r.settled(ctx); err != nil {
		return Task{}, err
	}
	t, err := r.db.GetTask(ctx, id)
	if err != nil {
		return Task{}, wrapNotFound(err)
	}
	out := taskOf(t)
	return out, r.withSession(ctx, &out)
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
	if err := r.settled(ctx); err != nil {
		return "", err
	}
	t, err := r.db.GetTask(ctx, id)
	if err != nil {
		return "", wrapNotFound(err)
	}
	return r.subagents.Output(ctx, t)
}

// model resolves a model name once per runtime.
// checkPrice is what refuses a model with no price under
// Options.MaxBudgetUSD: a budget cannot be kept by a run whose spending it
// cannot see. nil without a budget, when any model may run.
func (r *Runtime) checkPrice() func(provider.Ref) error {
	if r.opts.MaxBudgetUSD <= 0 {
		return nil
	}
	return func(ref provider.Ref) error {
		if _, ok := r.pricing.Lookup(ref); ok {
			return nil
		}
		return fmt.Errorf(`--max-budget-usd cannot be kept on model %s: its price is unknown; price it in settings, e.g. {"pricing": {%q: {"input": 3, "output": 15}}} (USD per million tokens)`, ref, ref.Model)
	}
}

func (r *Runtime) model(name string) (llm.Model, provider.Ref, error) {
	if h := r.replay; h != nil {
		return h.model, h.ref, nil
	}
	return r.resolveModel(name)
}

// resolveModel builds the model name names, ignoring a replay's.
func (r *Runtime) resolveModel(name string) (llm.Model, provider.Ref, error) {
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	if m, ok := r.models[name]; ok {
		return m.model, m.ref, nil
	}
	if l := r.opts.LLM; l != nil && name == "sdk:"+l.Name() {
		// The program's own model, by the name its runs record (a child
		// dispatched to another node inherits it by that name).
		return l, provider.Ref{Provider: "sdk", Model: l.Name()}, nil
	}
	pc := r.providerConfig()
	ref, err := provider.Parse(name, pc)
	if err != nil {
		return nil, provider.Ref{}, err
	}
	if w := r.notice(pc, ref); w != "" {
		r.log.Warn(w)
	}
	m, err := provider.Resolve(name, pc)
	if err != nil {
		return nil, provider.Ref{}, err
	}
	r.models[name] = resolved{m, ref}
	return m, ref, nil
}

// Agents lists every subagent definition found, in load order, with where
// it came from, whether it is in effect, and why not.
func (r *Runtime) Agents() []AgentEntry {
	return convert(r.agents.Entries(), agentEntryOf)
}

// Agent returns the definition in effect for name (case ignored).
func (r *Runtime) Agent(name string) (Agent, bool) {
	d, ok := r.agents.Get(name)
	if !ok {
		return Agent{}, false
	}
	return agentOf(d), true
}

// errRuntimeClosed stops the run trees of conversations still open when
// the runtime closes.
var errRuntimeClosed = errors.New("the runtime was closed")

// Close stops what is still running, releases the owner lock and closes
// the store.
func (r *Runtime) Close() error {
	// The start-up work is bounded and leaves the store consistent at every
	// step, but it uses the store: it ends before the store closes.
	<-r.settledCh
	// The trees of conversations still open stop too: their background
	// commands are process groups that must not outlive the runtime.
	r.groupMu.Lock()
	for _, g := range r.groups {
		g.Stop(errRuntimeClosed)
	}
	r.groupMu.Unlock()
	// The runs first, the dispatched ones this node works among them (a
	// job fetched meanwhile is passed back for another node), while the
	// node still heartbeats for them; then the node, the last of what
	// uses the store.
	r.subagents.Close()
	r.mcp.manager.Close() // after the runs that use its servers
	var nerr error
	if r.node != nil {
		nerr = r.node.Close()
	}
	err := errors.Join(r.settleErr, nerr, r.owner.Close(), r.db.Close(), r.sandbox.Close())
	if r.scratch != "" {
		err = errors.Join(err, os.RemoveAll(r.scratch))
	}
	return err
}

// Warnings are the non-fatal problems found in the settings (unknown keys).
func (r *Runtime) Warnings() []string {
	<-r.reported
	out := make([]string, 0, len(r.cfg.Warnings)+len(r.warnings))
	for _, w := range r.cfg.Warnings {
		out = append(out, w.String())
	}
	return append(out, r.warnings...)
}

// Trust is the user's trust in the project, as decided when the runtime
// opened (AssessWorkspace).
func (r *Runtime) Trust() WorkspaceTrust { return r.trust }

// PermissionMode is the main agent's mode from the settings and flags:
// what a run gets when it names none.
func (r *Runtime) PermissionMode() PermissionMode { return PermissionMode(r.policy.Mode) }

// Cwd is the runtime's working directory.
func (r *Runtime) Cwd() string { return r.cwd }

// Sessions lists sessions, newest first: those whose working directory is
// cwd, or all of them when cwd is "". A limit of 0 lists them all.
func (r *Runtime) Sessions(ctx context.Context, cwd string, limit int) ([]Session, error) {
	if err := r.settled(ctx); err != nil {
		return nil, err
	}
	infos, err := r.db.ListSessions(ctx, session.Filter{Cwd: cwd, Limit: limit})
	if err != nil {
		return nil, err
	}
	return convert(infos, sessionOf), nil
}

// Session returns one session's record and its transcript; its error
// wraps ErrNotFound when there is no such session.
func (r *Runtime) Session(ctx context.Context, id string) (Session, []TranscriptEntry, error) {
	if err := session.ValidateID(id); err != nil {
		return Session{}, nil, err
	}
	if err := r.settled(ctx); err != nil {
		return Session{}, nil, err
	}
	info, err := r.db.GetSession(ctx, id)
	if err != nil {
		return Session{}, nil, wrapNotFound(err)
	}
	entries, _, err := r.sessions.ReadTranscript(ctx, info)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return sessionOf(info), nil, err
	}
	return sessionOf(info), convert(entries, transcriptEntryOf), nil
}

func (r *Runtime) providerConfig() provider.Config {
	s := r.cfg.Settings
	// Where requests go and with which key is the user's alone, trusted
	// project or not: a repository's baseURL would receive the user's key
	// on the first request, its apiKeyEnv send any variable, its aliases
	// re-point --model (issue 22).
	mine := r.cfg.Personal
	eps := map[string]provider.Endpoint{}
	for name, p := range mine.Providers {
		eps[name] = provider.Endpoint{Type: p.Type, BaseURL: p.BaseURL, APIKey: p.APIKey, APIKeyEnv: p.APIKeyEnv,
			Headers: p.Headers, Organization: p.Organization}
	}
	return provider.Config{
		DefaultProvider: mine.DefaultProvider, Aliases: mine.Aliases, Endpoints: eps,
		Dir: r.cwd, Getenv: r.getenv, HTTPClient: r.opts.HTTPClient, Limits: s.Limits.Stream(), Now: r.now,
	}
}

// notice warns, once per model, that ref's model is deprecated; it
// returns the warning when this call is the one that gave it. The caller
// holds modelMu, or is New, before anything else can resolve a model.
func (r *Runtime) notice(pc provider.Config, ref provider.Ref) string {
	st, text := pc.Lifecycle(ref)
	if st != catalog.Deprecated || r.noticed[ref.String()] {
		return ""
	}
	if r.noticed == nil {
		r.noticed = map[string]bool{}
	}
	r.noticed[ref.String()] = true
	return text
}

// compaction is the settings' compaction for children (nil: off).
func compaction(c config.Compaction) *compact.Config {
	if c.Disabled {
		return nil
	}
	return &compact.Config{Window: c.Window, Threshold: c.Threshold, KeepRecent: c.KeepRecent}
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

// offered reports whether t is in the pool names allows (Options.ToolNames):
// nil allows every tool.
func offered(t tool.Tool, names []string) bool {
	if names == nil {
		return true
	}
	info := t.Info()
	return slices.ContainsFunc(names, func(n string) bool { return n == info.Name || slices.Contains(info.Aliases, n) })
}

// forkEnv reads a switch such as CADRE_FORK_SUBAGENT: 1 or true turns it
// on.
func forkEnv(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// agentNames lists the subagents the main agent could be offered, for the
// init line.
func (r *Runtime) agentNames() []string {
	var names []string
	for _, d := range r.agents.All() {
		if d.Mode != "primary" {
			names = append(names, d.Name)
		}
	}
	return names
}

func hasTool(tools []tool.Tool, name string) bool {
	for _, t := range tools {
		if t.Info().Name == name {
			return true
		}
	}
	return false
}
