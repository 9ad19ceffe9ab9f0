package subagent

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/childprompt"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/contextfiles"
	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/lane"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/records"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/subagent/runtable"
	"github.com/cadre-dev/cadre/internal/subagent/shell"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The Service, its configuration, the caller a spawn tool works for, and
// the choice of tools by profile.

// MaxDepth is the hard cap on spawn depth (S-C1).
const MaxDepth = 3

// Config is what a Service needs from the runtime.
type Config struct {
	Bus      *event.Bus
	Now      func() time.Time
	Sessions *session.Manager
	Index    session.Index
	Agents   *agent.Registry
	Settings config.Subagents
	// Policy is the main session's policy: its rules (permissions.task in
	// Policy.Task included), asker and workspace hold for every child; the
	// mode is decided per child.
	Policy permission.Policy
	// Resolve builds the model with this name.
	Resolve func(name string) (llm.Model, provider.Ref, error)
	// ParseModel says which provider a model name selects, reading
	// nothing; nil parses with no aliases or custom providers. A model
	// named in a tool call is parsed before it is resolved, to refuse the
	// scripted model.
	ParseModel func(name string) (provider.Ref, error)
	Pricing    provider.Pricing
	// CheckPrice, if set, refuses a child on a model it names: under
	// --max-budget-usd, one with no price, whose spending the budget
	// could not see. The error is what the spawning model reads.
	CheckPrice func(provider.Ref) error
	// BaseTools returns every tool a child may be given, spawn tools aside
	// (the runtime's MCP tools among them, as connected at the spawn).
	BaseTools func() []tool.Tool
	// MCP gives a child the servers its definition names (mcpServers) and
	// checks its requiredMcpServers; nil: definitions' MCP fields do nothing.
	MCP MCP
	// MainCwd is the main workspace.
	MainCwd string
	// Tasks keeps the records of background runs.
	Tasks task.Store
	// Queue carries notifications and messages into agents' turns.
	Queue *queue.Queue
	// Mailbox, if set, carries SendMessage's messages to running agents
	// instead of Queue, so that they reach an agent running in another
	// process that shares the store (the PostgreSQL store's); nil: a
	// message reaches only an agent running in this process.
	Mailbox mailbox.Mailbox
	// Watch, if set, tells a background run at once that its record
	// changed, so that a stop requested by another process ends it within
	// moments (the PostgreSQL store's LISTEN/NOTIFY); nil: the run sees
	// it at its next WatchInterval poll.
	Watch mailbox.TaskWatcher
	// Dispatch, if set, takes every background run that can run on
	// another node, for the first node with a free place to run, this one
	// included (store.dispatch: any; dispatch.go, internal/crossnode).
	// Nil: background runs wait for a place in this process's lane.
	Dispatch crossnode.Dispatcher
	// Owner is this process's owner id (task.Owner), written on the
	// records of the runs it executes.
	Owner string
	// OutputDir is where task output files go ($CADRE_HOME/tasks).
	OutputDir string
	// ShellMaxOutputBytes bounds a background shell's output file; the
	// oldest output goes first (backgroundShell.maxOutputBytes; 0 means
	// shelltask.DefaultMaxOutputBytes).
	ShellMaxOutputBytes int64
	// Fork turns the Agent-tool fork on (subagents.fork or
	// CADRE_FORK_SUBAGENT=1): an Agent call without subagent_type forks
	// the caller instead of starting general-purpose.
	Fork bool
	// Teams turns agent teams on (subagents.teams, CADRE_AGENT_TEAMS=1):
	// in the claude profile an Agent call of the main agent with a name
	// adds a teammate (team.go). TaskLists keeps the teams' task lists;
	// nil keeps them in memory.
	Teams     bool
	TaskLists tasklist.Store
	// Coordinator runs the main agent in coordinator mode (S-A7,
	// coordinator.go): it leads a team, and its Agent calls all run in
	// the background on their definitions' models.
	Coordinator bool
	// Compaction, if set, compacts children's contexts as the main
	// agent's is (nil: never).
	Compaction *compact.Config
	// ProgressEvery is the least time between two progress summaries of a
	// background run (a forked model call each); 0 means 30s, negative
	// turns them off.
	ProgressEvery time.Duration
	// WatchInterval is how often a running background task checks its
	// record for a stop request from another process (the fallback when
	// Watch is set) and refreshes its heartbeat; default 1s.
	WatchInterval time.Duration
	// MaxToolInputBytes bounds a tool call's input in every child's loop
	// (limits.maxToolInputBytes); 0 means the loop's default.
	MaxToolInputBytes int64
	// Commands are the loaded commands and skills: an agent's skills
	// field preloads from them. Nil: none.
	Commands *command.Set
	// ContextFiles are the main agent's context files (its preamble). A
	// fork opens with all of them, the parent's exact block, whose shared
	// prefix it is part of; another child with what preamble gives it
	// (S-E4).
	ContextFiles []contextfiles.File
	// Logger receives a warning, with the ids involved, for every
	// best-effort write that fails (a child session's or a task's record,
	// an archive, a heartbeat) and for the children's loop warnings; nil
	// discards them.
	Logger *slog.Logger
	// Hooks are the runtime's hooks (nil: none); a definition's own hooks
	// are added for its runs — a project's definitions' only when
	// ProjectHooks is set (they are commands the repository chose).
	// DisableAllHooks (the settings' disableAllHooks) turns agent files'
	// hooks off too.
	Hooks                         *hook.Engine
	ProjectHooks, DisableAllHooks bool
	// Tracer makes a span of each child's run, the child of the span of
	// the tool call that spawned it, and of its model and tool calls (the
	// zero Tracer: none).
	Tracer telemetry.Tracer
	// Profile builds the tool surface the service offers (DESIGN §12; a
	// package under internal/subagent, which internal/subagent/profiles
	// picks by subagents.surface); nil offers no spawn tools.
	Profile NewProfile
}

// MCP is the runtime's MCP client, as spawning needs it.
type MCP interface {
	// ForAgent starts the definition's inline mcpServers for one run and
	// returns their tools and stop, which ends them (nil when there is
	// nothing to stop); it fails, clearly, when a server the definition
	// requires is not connected. Warnings are about servers it names that
	// do not exist or did not start.
	ForAgent(ctx context.Context, def agent.Definition) (tools []tool.Tool, stop func(), warnings []string, err error)
}

// Service spawns subagents for one runtime. It is safe for concurrent use.
type Service struct {
	cfg     Config
	log     *slog.Logger
	profile Profile // the tools it offers (Config.Profile)
	depth   int

	lane *lane.Lane // the subagent lane (S-C2)
	// records writes a child's session and task records, together where
	// one store holds both (internal/subagent/records).
	records *records.Writer
	// fg bounds the foreground runs in flight, one set of places per
	// depth of the child (subagents.maxForegroundConcurrent, limits.go).
	fg [MaxDepth + 1]*lane.Places
	// orphans owns the runs of callers that bring no Group of their own,
	// and the dispatched runs this node executes.
	orphans *Group
	// closed is set once Close began: RunDispatched takes no more runs.
	closed atomic.Bool
	// toolProtos hold the per-caller tools' schemas by tool name and
	// input type (CallerTool).
	toolProtos sync.Map

	// runs are the runs in progress in this process, by id, and the
	// reservations of spawns in flight (internal/subagent/runtable).
	runs *runtable.Table[*liveTask]
	// events publishes the runs' task_* events (internal/subagent/notify).
	events notify.Publisher
	// shells runs the agents' background commands (internal/subagent/shell).
	shells *shell.Runner
	// desk delivers the ends of runs once (S-N1; internal/subagent/deliver).
	desk *deliver.Desk
	// systems renders the children's system prompts: the ten children of
	// one message share one, rendered once.
	systems childprompt.Systems
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	s := &Service{cfg: cfg, runs: runtable.New[*liveTask](), lane: lane.New(cfg.Settings.Lane())}
	if cfg.Queue == nil {
		s.cfg.Queue = &queue.Queue{}
	}
	for i := range s.fg {
		s.fg[i] = lane.NewPlaces(cfg.Settings.ForegroundLimit())
	}
	if cfg.Tasks == nil {
		s.cfg.Tasks = task.NewMem()
	}
	s.orphans = NewGroup(context.Background())
	s.log = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	var index session.Index
	if s.cfg.Sessions != nil {
		index = s.cfg.Sessions.Index()
	}
	s.records = records.New(s.cfg.Tasks, index, s.cfg.Mailbox, s.cfg.Owner, s.log)
	s.desk = &deliver.Desk{Tasks: s.cfg.Tasks, Queue: s.cfg.Queue, Runs: finder{s}, Log: s.log}
	if s.cfg.ProgressEvery == 0 {
		s.cfg.ProgressEvery = 30 * time.Second
	}
	if s.cfg.WatchInterval <= 0 {
		s.cfg.WatchInterval = time.Second
	}
	if s.cfg.ShellMaxOutputBytes <= 0 {
		s.cfg.ShellMaxOutputBytes = shelltask.DefaultMaxOutputBytes
	}
	if s.cfg.OutputDir == "" {
		s.cfg.OutputDir = filepath.Join(os.TempDir(), "cadre-tasks")
	}
	s.depth = cfg.Settings.Depth()
	if s.depth > MaxDepth {
		s.depth = MaxDepth
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	if s.cfg.TaskLists == nil {
		s.cfg.TaskLists = tasklist.NewMem()
	}
	s.events = notify.Publisher{Bus: s.cfg.Bus, Now: s.cfg.Now}
	s.shells = s.newShells()
	if cfg.Profile != nil {
		s.profile = cfg.Profile(s)
	}
	return s, nil
}

// Close stops the runs of callers that had no Group and waits for them.
func (s *Service) Close() {
	s.closed.Store(true) // dispatched runs go to other nodes from now on
	s.orphans.Stop(runs.ErrSessionStopped)
	s.orphans.Wait()
}

// Caller is the agent a spawn tool works for: the parent of what it spawns.
type Caller struct {
	RootSessionID string
	SessionID     string
	// Agent is "main" or the caller's agent type.
	Agent string
	// Depth is 0 for the main session.
	Depth int
	Model llm.Model
	Ref   provider.Ref
	Mode  permission.Mode
	Cwd   string
	// Workspace is the caller's workspace root, inside which its
	// children's cwd must lie; "" is the main workspace.
	Workspace string
	// TaskRules are the caller's own definition's task rules; they apply
	// after the settings' rules.
	TaskRules permission.TaskRules
	// Totals receives the usage and cost of every run in the tree.
	Totals *runner.Totals
	// RootTranscriptPath is the main session's transcript, which hooks'
	// inputs name (Claude Code's transcript_path) inside subagents too.
	RootTranscriptPath string
	// AgentID is the target of the notifications and messages meant for
	// the caller: a subagent's agent id; for the main agent, "" or, in a
	// conversation, its session id, so that conversations of one runtime
	// never take each other's notifications.
	AgentID string
	// Group owns the runs of the tree.
	Group *Group
	// Fork is set when the caller is itself a fork: it may not fork again.
	Fork bool
	// Teammate is the caller's name on the team of RootSessionID when it
	// is a teammate (team.go): it gets the team's tools, never a spawn tool.
	Teammate string
	// Fresh is set for a main session this conversation created (not a
	// resumed one): its task records can only come from its Group, so
	// the per-turn context reads none from the store until the group
	// has started something.
	Fresh bool
	// RecentTasks keeps the per-turn context's read of the tree's newest
	// tasks across the turns of a conversation (nil: read each turn).
	RecentTasks *RecentTasks
	// Leaf is set when the caller's definition may not spawn at all,
	// whatever the depth allows: the built-ins (DESIGN S-D4).
	Leaf bool
	// Asker asks on this agent's behalf, naming it (permission.Identify);
	// nil: the service's Policy.Asker, named after the caller. A child's
	// asker wraps its parent's, so every agent of a conversation asks
	// through the conversation's asker.
	Asker permission.Asker
	// Remembered are the conversation's session-scoped allow rules, shared by
	// every policy of its tree.
	Remembered *permission.Remembered
	// Live, if set, gives the caller's permission mode and model as they
	// are when it spawns: a live conversation may change them between
	// calls. Mode, Model and Ref hold otherwise.
	Live func() Live
}

// Live is what of a caller may change while it runs.
type Live struct {
	Mode  permission.Mode
	Model llm.Model
	Ref   provider.Ref
}

// current is c with its live settings applied.
func (c Caller) current() Caller {
	if c.Live != nil {
		l := c.Live()
		c.Mode, c.Model, c.Ref = l.Mode, l.Model, l.Ref
	}
	return c
}

// policy is the service's policy as the caller's spawn decisions use it:
// asking through the caller's asker, with the conversation's grants.
func (s *Service) policy(c Caller) permission.Policy {
	p := s.cfg.Policy
	p.Asker, p.Remembered = s.asker(c), c.Remembered
	return p
}

// asker is the asker that asks on c's behalf.
func (s *Service) asker(c Caller) permission.Asker {
	if c.Asker != nil {
		return c.Asker
	}
	id := permission.Identity{Agent: c.Agent}
	if c.Depth > 0 {
		id.AgentID = c.AgentID // the main agent's is its queue target, not an agent id
	}
	return permission.Identify(s.cfg.Policy.Asker, id)
}

// Tools returns the tools the caller is offered under the configured
// surface profile (Config.Profile): its spawn tool and the tools that talk
// to its runs, or none.
func (s *Service) Tools(c Caller) []tool.Tool {
	if c.Group == nil {
		c.Group = s.orphans
	}
	if s.profile == nil {
		return nil
	}
	return s.profile.Tools(c)
}

// Listed are the agents the caller's spawn tool describes
// (routing.Router.Listed).
func (s *Service) Listed(c Caller) []agent.Definition { return s.router().Listed(whom(c)) }

// SystemContext is the block the main agent sees each turn (S-A5): the
// agents it may delegate to and how.
//
// It also summarises the session's background tasks: at most the 10 most
// recent, with id, name, status and age.
func (s *Service) SystemContext(ctx context.Context, c Caller) string {
	if c.Depth != 0 || c.Depth >= s.depth {
		return ""
	}
	if _, removed := s.cfg.Policy.SpawnRemoved(c.TaskRules); removed {
		return ""
	}
	var names []string
	for _, d := range s.Listed(c) {
		names = append(names, d.Name)
	}
	var tasks []childprompt.Task
	// A session this process just created has no tasks before its group
	// starts one: a one-turn run skips the read (and the store's reader
	// connection it would open).
	if c.RootSessionID != "" && !(c.Fresh && c.Group != nil && !c.Group.Started()) {
		tasks = childprompt.Tasks(s.recentTasks(ctx, c), s.cfg.Now())
	}
	return childprompt.Context(names, s.toolName(), tasks)
}

// toolName is the spawn tool's name, as the per-turn context names it.
func (s *Service) toolName() string {
	if s.profile == nil {
		return ""
	}
	return s.profile.SpawnTool()
}

// spent adds the usage of a runtime service's forked call (a compaction, a
// progress summary) to the caller's run tree, priced for its model.
func (s *Service) spent(c Caller) func(llm.Usage) {
	return func(u llm.Usage) {
		if c.Totals != nil && c.Model != nil {
			c.Totals.Add(c.Model.Name(), u, s.cfg.Pricing.Cost(c.Ref, u))
		}
	}
}

// loopConfig is the child's loop: runner.LoopConfig, as for the main
// agent, with a fork's exact request settings.
func (s *Service) loopConfig(def agent.Definition, ch *child, tools *tool.Set, sessionID string, fork *tool.Turn, hooks *runner.Hooks) loop.Config {
	a := runner.Agent{
		Hooks: hooks,
		Name:  def.Name, Model: ch.caller.Model, ModelID: ch.caller.Ref.Model, System: s.systemPrompt(def, ch),
		Tools: tools, Permit: s.permitOf(ch), Env: tool.Env{Cwd: ch.cwd, SessionID: sessionID},
		MaxTurns: def.MaxTurns, MaxToolInputBytes: s.cfg.MaxToolInputBytes,
		Compaction: s.cfg.Compaction, Spent: s.spent(ch.caller), Logger: s.log,
		Preamble: childprompt.Preamble(s.cfg.ContextFiles, def, fork != nil), Tracer: s.cfg.Tracer,
	}
	if fork != nil {
		// Exactly the parent's rendered prompt and settings: the shared
		// prefix depends on it.
		a.System = fork.Request.System
	}
	cfg := runner.LoopConfig(a)
	if fork != nil {
		cfg.MaxTokens, cfg.Thinking = fork.Request.MaxTokens, fork.Request.Thinking
	} else {
		// Checked when the definition loaded (a bad value was dropped
		// with a warning), so the error cannot happen here.
		cfg.Thinking, _ = llm.ParseEffort(def.Effort)
		cfg.Temperature = def.Temperature
	}
	return cfg
}

// systemPrompt is the child's (childprompt.Systems): its definition's
// prompt or its workspace's prompt base, with its memory section if it
// has a memory.
func (s *Service) systemPrompt(def agent.Definition, ch *child) string {
	base := def.Prompt
	if ch.base != "" {
		base = ch.base
	}
	memory := ""
	if ch.memory != "" {
		memory = s.setup().MemoryPrompt(def, ch.memory, ch.policy.Home)
	}
	return s.systems.System(def.Name, base, memory, ch.cwd, s.cfg.Now())
}
