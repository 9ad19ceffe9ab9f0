package subagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/uuid"
)

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
	// BaseTools returns every tool a child may be given, spawn tools aside.
	BaseTools func() []tool.Tool
	// MainCwd is the main workspace.
	MainCwd string
	// Tasks keeps the records of background runs.
	Tasks task.Store
	// Queue carries notifications and messages into agents' turns.
	Queue *queue.Queue
	// Owner is this process's owner id (task.Owner), written on the
	// records of the runs it executes.
	Owner string
	// OutputDir is where task output files go ($CADRE_HOME/tasks).
	OutputDir string
	// Fork turns the Agent-tool fork on (subagents.fork or
	// CADRE_FORK_SUBAGENT=1): an Agent call without subagent_type forks
	// the caller instead of starting general-purpose.
	Fork bool
	// Compaction, if set, compacts children's contexts as the main
	// agent's is (nil: never).
	Compaction *compact.Config
	// ProgressEvery is the least time between two progress summaries of a
	// background run (a forked model call each); 0 means 30s, negative
	// turns them off.
	ProgressEvery time.Duration
	// WatchInterval is how often a running background task checks its
	// record for a stop request from another process and refreshes its
	// heartbeat; default 1s.
	WatchInterval time.Duration
	// MaxToolInputBytes bounds a tool call's input in every child's loop
	// (limits.maxToolInputBytes); 0 means the loop's default.
	MaxToolInputBytes int64
}

// Service spawns subagents for one runtime. It is safe for concurrent use.
type Service struct {
	cfg     Config
	surface string
	depth   int

	lane *lane // the subagent lane (S-C2)
	// fg bounds the foreground runs in flight, one set of places per
	// depth of the child (subagents.maxForegroundConcurrent, limits.go).
	fg [MaxDepth + 1]chan struct{}
	// orphans owns the runs of callers that bring no Group of their own.
	orphans *Group
	// protos hold the spawn tools' schemas, inferred once: every caller
	// gets its own variant (its description lists its agents).
	protos struct {
		agent *tool.Typed[AgentInput]
		task  *tool.Typed[TaskInput]
	}

	mu      sync.Mutex
	running map[string]*liveTask // runs in progress in this process, by id
	// reserved holds what a spawn has checked but not yet launched — a
	// session being continued, a name being taken — so that two spawns in
	// flight cannot both pass the same check.
	reserved map[string]bool
	// delivery makes a notification's "mark notified, then queue" one
	// step for the tools that read results (deliver.go).
	delivery sync.Mutex
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	s := &Service{cfg: cfg, running: map[string]*liveTask{}, reserved: map[string]bool{}, lane: newLane(cfg.Settings.Lane())}
	if cfg.Queue == nil {
		s.cfg.Queue = &queue.Queue{}
	}
	for i := range s.fg {
		s.fg[i] = make(chan struct{}, cfg.Settings.ForegroundLimit())
	}
	if cfg.Tasks == nil {
		s.cfg.Tasks = task.NewMem()
	}
	s.orphans = NewGroup(context.Background())
	s.protos.agent = tool.New[AgentInput](tool.Info{Name: "Agent"}, nil)
	s.protos.task = tool.New[TaskInput](tool.Info{Name: "task"}, nil)
	if s.cfg.ProgressEvery == 0 {
		s.cfg.ProgressEvery = 30 * time.Second
	}
	if s.cfg.WatchInterval <= 0 {
		s.cfg.WatchInterval = time.Second
	}
	if s.cfg.OutputDir == "" {
		s.cfg.OutputDir = filepath.Join(os.TempDir(), "cadre-tasks")
	}
	switch s.surface = cfg.Settings.Surface; s.surface {
	case "", "claude":
		s.surface = "claude"
	case "opencode", "harness", "gateway":
	default:
		return nil, fmt.Errorf("subagents.surface %q is unknown: want claude, opencode, harness or gateway", s.surface)
	}
	s.depth = cfg.Settings.Depth()
	if s.depth > MaxDepth {
		s.depth = MaxDepth
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	return s, nil
}

// Close stops the runs of callers that had no Group and waits for them.
func (s *Service) Close() {
	s.orphans.Stop(errSessionStopped)
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
	// AgentID is "" for the main agent and the agent id of a subagent: the
	// target of the notifications and messages meant for it.
	AgentID string
	// Group owns the runs of the tree.
	Group *Group
	// Fork is set when the caller is itself a fork: it may not fork again.
	Fork bool
	// Leaf is set when the caller's definition may not spawn at all,
	// whatever the depth allows: the built-ins (DESIGN S-D4).
	Leaf bool
}

// Tools returns the spawn tool the caller is offered under the configured
// surface profile: none for a leaf, or when the task rules end in "*": deny.
//
// The harness profile is the exception for leaves: as the Java harness
// does, it offers agent_spawn at every depth, and the call answers with
// the profile's documented error ("Maximum spawn depth exceeded").
func (s *Service) Tools(c Caller) []tool.Tool {
	if c.Group == nil {
		c.Group = s.orphans
	}
	if _, removed := s.cfg.Policy.SpawnRemoved(c.TaskRules); removed {
		return nil
	}
	if c.Depth >= s.depth || c.Leaf {
		if s.surface == "harness" {
			return s.harnessTools(c)[:1] // agent_spawn alone: it only refuses
		}
		return nil
	}
	switch s.surface {
	case "opencode":
		return []tool.Tool{s.taskTool(c)}
	case "harness":
		return s.harnessTools(c)
	case "gateway":
		return s.gatewayTools(c)
	}
	return append([]tool.Tool{s.agentTool(c)}, s.taskTools(c)...)
}

// listed are the agents the caller's spawn tool describes: subagents (not
// primary ones), not hidden, and not denied outright.
func (s *Service) listed(c Caller) []agent.Definition {
	var out []agent.Definition
	for _, d := range s.cfg.Agents.All() {
		if d.Mode == "primary" || d.Hidden || d.URL != "" || !s.cfg.Policy.SpawnVisible(d.Name, c.TaskRules) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// SystemContext is the block the main agent sees each turn (S-A5): the
// agents it may delegate to and how.
//
// It also summarises the session's background tasks: at most the 10 most
// recent, with id, name, status and age.
func (s *Service) SystemContext(c Caller) string {
	if c.Depth != 0 || c.Depth >= s.depth {
		return ""
	}
	if _, removed := s.cfg.Policy.SpawnRemoved(c.TaskRules); removed {
		return ""
	}
	var names []string
	for _, d := range s.listed(c) {
		names = append(names, d.Name)
	}
	type row struct{ ID, Name, Agent, Description, Status, Age string }
	var tasks []row
	if c.RootSessionID != "" {
		recs, _ := s.cfg.Tasks.ListTasks(context.Background(), task.Filter{RootSessionID: c.RootSessionID, Limit: 10})
		now := s.cfg.Now()
		for _, t := range recs {
			// The description is model text: one line, and no tags of its own.
			tasks = append(tasks, row{t.ID, t.Name, t.Agent, escapeTags(oneLine(t.Description)), string(t.Status), now.Sub(t.Created).Round(time.Second).String()})
		}
	}
	if len(names) == 0 && len(tasks) == 0 {
		return ""
	}
	return render(contextTmpl, map[string]any{"Agents": names, "Tool": s.toolName(), "Tasks": tasks})
}

func (s *Service) toolName() string {
	switch s.surface {
	case "opencode":
		return "task"
	case "harness":
		return "agent_spawn"
	case "gateway":
		return "sessions_spawn"
	}
	return "Agent"
}

// spawnRequest is one spawn call, whatever the surface.
type spawnRequest struct {
	ToolUseID    string
	Description  string
	Prompt       string
	SubagentType string
	Model        string
	Cwd          string
	SessionID    string // continue this child session
	Name         string // SendMessage name
	Background   bool   // run_in_background
	// Fork, when set, makes the run a fork of the caller continuing this
	// turn (S-F1).
	Fork    *tool.Turn
	Timeout *int // timeout_seconds: foreground wait before backgrounding
	// Isolation is the call's isolation ("worktree"); the definition's
	// applies when it is empty.
	Isolation string
	// Tools, when set, is the child's whole pool (a fork command's
	// allowed-tools); its entries are allow rules for the child as well.
	Tools []string
	// History is a conversation the new child continues (a fork command's).
	History []llm.Message
	// RunTimeout and Cleanup override subagents.runTimeoutSeconds and
	// subagents.cleanup for this run (the gateway's sessions_spawn).
	RunTimeout time.Duration
	Cleanup    string
	// Foreground keeps the run in the foreground whatever its definition
	// or a background request says: its caller needs the result (a slash
	// command, OpenCode's task tool).
	Foreground bool

	// cwdRecorded says Cwd is the continued session's own, not the model's.
	cwdRecorded bool
}

// outcome is a finished child run, or a launched one.
type outcome struct {
	def       agent.Definition
	sessionID string
	res       *runner.Result
	warnings  []string
	task      *liveTask
	launched  bool
}

// spawn starts a child and, in the foreground, waits for it (S-L1). It
// returns a launched outcome when the child runs in the background, from
// the start or after its foreground wait ended (S-L2).
func (s *Service) spawn(ctx context.Context, c Caller, req spawnRequest) (*outcome, error) {
	if c.Leaf {
		return nil, fmt.Errorf("agent %q cannot start agents: the built-in agents are leaves; define an agent of your own to delegate from", c.Agent)
	}
	var wait time.Duration // timeout_seconds: how long the caller waits
	if req.Timeout != nil && !req.Foreground {
		wait = time.Duration(*req.Timeout) * time.Second
	}
	if req.Foreground || (!req.Background && req.Fork == nil && (req.Timeout == nil || wait > 0)) {
		// A run that may be waited for takes a foreground place before
		// anything of it exists; time spent queued counts against its
		// timeout_seconds, and a call still queued when it runs out starts
		// in the background instead.
		queued := time.Now()
		release, err := s.foregroundSlot(ctx, c.Depth+1, wait)
		if err != nil {
			return nil, err
		}
		if release == nil {
			req.Background = true
		} else {
			defer release()
			if wait > 0 {
				if wait -= time.Since(queued); wait <= 0 {
					req.Background = true
				}
			}
		}
	}
	r, err := s.begin(ctx, c, req)
	if err != nil {
		return nil, err
	}
	background := !req.Foreground && (req.Background || r.def.Background || (req.Timeout != nil && *req.Timeout == 0))
	t, err := s.launch(r, background)
	if err != nil {
		return nil, err
	}
	out := &outcome{def: r.def, sessionID: t.id, warnings: r.warnings, task: t}
	if background {
		out.launched = true
		return out, nil
	}
	if s.waitForeground(ctx, t, wait, !req.Foreground) {
		out.launched = true
		return out, nil
	}
	t.mu.Lock()
	out.res = t.final
	t.mu.Unlock()
	return out, nil
}

// route picks the definition for subagent_type (S-A2): the named agent, or
// general-purpose when none is named. Its errors list what c's spawn tool
// lists.
func (s *Service) route(c Caller, name string) (agent.Definition, error) {
	if name == "" {
		name = "general-purpose"
	}
	if err := agent.ValidateName(name); err != nil {
		return agent.Definition{}, fmt.Errorf("invalid subagent_type: %w", err)
	}
	def, ok := s.cfg.Agents.Get(name)
	if !ok {
		return agent.Definition{}, fmt.Errorf("unknown subagent_type %q; available agents: %s", name, strings.Join(s.names(c), ", "))
	}
	if def.Mode == "primary" {
		return agent.Definition{}, fmt.Errorf("agent %q is a primary agent, not a subagent; available agents: %s", def.Name, strings.Join(s.names(c), ", "))
	}
	if def.URL != "" || def.Isolation == "remote" {
		return agent.Definition{}, fmt.Errorf("agent %q runs remotely (%s), and remote agents are not supported yet", def.Name, def.URL)
	}
	return def, nil
}

// continued checks a session_id to continue and returns its agent. Only a
// child of c's own session tree may be continued — the rule SendMessage,
// TaskOutput and TaskStop follow — never another session's, which may
// belong to another project.
func (s *Service) continued(ctx context.Context, c Caller, req *spawnRequest) (agent.Definition, error) {
	if err := session.ValidateID(req.SessionID); err != nil {
		return agent.Definition{}, fmt.Errorf("invalid session_id: %w", err)
	}
	if err := s.inTree(ctx, c, req.SessionID); err != nil {
		return agent.Definition{}, err
	}
	info, err := s.cfg.Index.GetSession(ctx, req.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return agent.Definition{}, fmt.Errorf("no agent session %q to continue: pass a session_id from an earlier result's <task_metadata>, or omit it to start a new agent", req.SessionID)
	}
	if err != nil {
		return agent.Definition{}, err
	}
	if info.ParentID == "" {
		return agent.Definition{}, fmt.Errorf("session %q is a main session, not an agent's; only agent sessions can be continued with session_id", req.SessionID)
	}
	if st, err := os.Stat(info.Cwd); req.Cwd == "" && info.Cwd != "" && err == nil && st.IsDir() {
		// A continued agent goes on where it worked before (its worktree,
		// while it is kept).
		req.Cwd, req.cwdRecorded = info.Cwd, true
	}
	if strings.EqualFold(info.Agent, "fork") {
		// A fork goes on as a general-purpose agent holding the fork's
		// whole conversation; the parent's exact tools went with its turn.
		def := agent.GeneralPurpose()
		def.Name = "fork"
		return def, nil
	}
	if req.SubagentType != "" && !strings.EqualFold(req.SubagentType, info.Agent) {
		return agent.Definition{}, fmt.Errorf("session %q belongs to agent %q, not %q", req.SessionID, info.Agent, req.SubagentType)
	}
	return s.route(c, info.Agent)
}

// names are the agents c's spawn tool lists, for error messages: never a
// hidden or a denied one.
func (s *Service) names(c Caller) []string {
	var out []string
	for _, d := range s.listed(c) {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// child is everything decided about a run before it starts.
type child struct {
	caller Caller
	cwd    string
	base   string // prompt base from the workspace, if any
	policy permission.Policy
}

func (s *Service) prepare(c Caller, def agent.Definition, req spawnRequest) (*child, []string, error) {
	ws, err := def.Resolve(s.cfg.MainCwd)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %q: %w", def.Name, err)
	}
	// Where the parent may work bounds where its child may: the child's
	// workspace root is the parent's, or its definition's own workspace
	// (S-D5) when that lies inside it; a worktree child gets its checkout
	// later (isolate). Path rules stay anchored to the project whatever
	// the root (Policy.Project).
	parent := s.cfg.Policy
	if c.Workspace != "" {
		parent.Workspace = c.Workspace
	}
	root, cwd := parent.Workspace, parent.Workspace
	if filepath.Clean(ws.Cwd) != filepath.Clean(s.cfg.MainCwd) {
		if !parent.Contains(ws.Cwd) {
			return nil, nil, fmt.Errorf("agent %q: its workspace %s is outside the workspace (%s); an agent's workspace must lie inside it or in a directory the user added (permissions.additionalDirectories)", def.Name, ws.Cwd, parent.Workspace)
		}
		root, cwd = ws.Cwd, ws.Cwd
	}
	if req.Cwd != "" {
		cwd = req.Cwd
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(c.Cwd, cwd)
		}
		cwd = filepath.Clean(cwd)
		if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("cwd %q is not a directory", req.Cwd)
		}
		switch {
		case req.cwdRecorded:
			// A continued agent goes on where it worked before (its kept
			// worktree, say), which was checked when it started.
			root = cwd
		case !parent.Contains(cwd):
			return nil, nil, fmt.Errorf("cwd %q is outside the workspace (%s): a subagent works inside its parent's workspace or a directory the user added (permissions.additionalDirectories)", req.Cwd, parent.Workspace)
		}
	}
	model, ref, warnings := s.model(c, req.Model, def.Model)
	mode, err := permission.ChildMode(c.Mode, def.PermissionMode)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %q: %w", def.Name, err)
	}
	if req.Fork != nil {
		// A fork inherits the model (its requests must share the parent's
		// prefix) and runs in "bubble" mode: the parent's mode, its asks
		// raised to the parent's handler.
		model, ref, warnings, mode, cwd, root = c.Model, c.Ref, nil, c.Mode, c.Cwd, parent.Workspace
	}
	pol := s.cfg.Policy
	pol.Mode = mode
	pol.Workspace = root
	if root != parent.Workspace {
		pol.AdditionalDirs = append(slices.Clone(pol.AdditionalDirs), parent.Workspace)
	}
	pol.Rules = permission.Rules{
		Allow: slices.Clone(pol.Rules.Allow), Ask: slices.Clone(pol.Rules.Ask), Deny: slices.Clone(pol.Rules.Deny),
	}
	for _, l := range []struct {
		in  []string
		out *[]permission.Rule
	}{{def.Allow, &pol.Rules.Allow}, {def.Ask, &pol.Rules.Ask}, {def.Deny, &pol.Rules.Deny}} {
		for _, raw := range l.in {
			r, err := permission.ParseRule(raw)
			if err != nil {
				return nil, nil, fmt.Errorf("agent %q: permission rule %q: %w", def.Name, raw, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	for _, raw := range req.Tools {
		// allowed-tools allows what it names as well as restricting the
		// pool to it.
		r, err := permission.ParseRule(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("allowed-tools entry %q: %w", raw, err)
		}
		pol.Rules.Allow = append(pol.Rules.Allow, r)
	}
	taskRules, err := permission.ParseTaskRules(taskPairs(def.TaskRules))
	if err != nil {
		return nil, nil, fmt.Errorf("agent %q: permission.task: %w", def.Name, err)
	}
	return &child{
		caller: Caller{
			RootSessionID: c.RootSessionID, Agent: def.Name, Depth: c.Depth + 1,
			Model: model, Ref: ref, Mode: mode, Cwd: cwd, Workspace: root, TaskRules: taskRules, Totals: c.Totals, Group: c.Group,
			Fork: req.Fork != nil, Leaf: def.Source == agent.SourceBuiltin,
		},
		cwd: cwd, base: ws.PromptBase, policy: pol,
	}, warnings, nil
}

func taskPairs(rules []agent.TaskRule) [][2]string {
	out := make([][2]string, len(rules))
	for i, r := range rules {
		out[i] = [2]string{r.Pattern, r.Action}
	}
	return out
}

// model picks the child's model (S-A3): the call's, the definition's, the
// subagents default, else the parent's. "inherit" means the parent's; a
// name that does not resolve is skipped with a warning.
//
// The call's model comes from a model's tool input, and may not be the
// scripted model: its name is a file path, and loading it reads that file.
// Only the user picks it (--model, settings, an agent definition).
func (s *Service) model(c Caller, call, def string) (llm.Model, provider.Ref, []string) {
	var warnings []string
	type candidate struct {
		name, from string
		byTool     bool // named in a model's tool call
	}
	for _, cand := range []candidate{{call, "the call's model", true}, {def, "the agent's model", false}, {s.cfg.Settings.Model, "subagents.model", false}} {
		if cand.name == "" {
			continue
		}
		if cand.name == "inherit" {
			break
		}
		if cand.byTool && s.scripted(cand.name) {
			warnings = append(warnings, fmt.Sprintf("%s %q cannot be used (a tool call cannot choose the scripted model; only --model, settings or an agent definition can); falling back", cand.from, cand.name))
			continue
		}
		m, ref, err := s.cfg.Resolve(cand.name)
		if err == nil {
			return m, ref, warnings
		}
		warnings = append(warnings, fmt.Sprintf("%s %q cannot be used (%v); falling back", cand.from, cand.name, err))
	}
	return c.Model, c.Ref, warnings
}

// scripted reports whether name selects the scripted model, without
// building (or reading) anything.
func (s *Service) scripted(name string) bool {
	parse := s.cfg.ParseModel
	if parse == nil {
		parse = func(n string) (provider.Ref, error) { return provider.Parse(n, provider.Config{}) }
	}
	ref, err := parse(name)
	return err == nil && ref.Provider == "script"
}

// create makes the child session: parent id, session key and title (S-L1).
func (s *Service) create(ctx context.Context, c Caller, def agent.Definition, cwd string) (*session.Session, error) {
	id := newUUID()
	return s.cfg.Sessions.Create(ctx, session.Info{
		ID: id, ParentID: c.SessionID, Agent: def.Name, Cwd: cwd,
		Key:   "agent:" + def.Name + ":subagent:" + id,
		Title: "(@" + def.Name + " subagent)",
	})
}

// pool rebuilds the child's tools (S-P2): every available tool, filtered
// by the definition's tools / disallowedTools, the subagent tool policy
// and the global deny rules; a spawn tool only for non-leaves whose
// definition allows it.
func (s *Service) pool(def agent.Definition, ch *child, fork *tool.Turn, only []string) (*tool.Set, error) {
	if fork != nil {
		// The fork agent alone reuses the parent's exact tools (S-P2).
		return s.forkTools(fork, ch.caller)
	}
	allowAll := def.Tools == nil || slices.Contains(def.Tools, "*")
	named := func(list []string, name string, aliases []string) bool {
		for _, n := range list {
			n, _, _ = strings.Cut(n, "(") // "Bash(git:*)" names Bash
			// Names may be wildcards ("mcp__github__*"), as the settings'
			// subagent tool policy and OpenCode tool maps allow.
			n = strings.ToLower(strings.TrimSpace(n))
			if permission.WildcardMatch(n, strings.ToLower(name)) ||
				slices.ContainsFunc(aliases, func(a string) bool { return permission.WildcardMatch(n, strings.ToLower(a)) }) {
				return true
			}
		}
		return false
	}
	policy := s.cfg.Settings.Tools
	keep := func(t tool.Tool) bool {
		info := t.Info()
		if !allowAll && !named(def.Tools, info.Name, info.Aliases) {
			return false
		}
		if only != nil && !named(only, info.Name, info.Aliases) {
			return false
		}
		if named(def.DisallowedTools, info.Name, info.Aliases) || named(policy.Deny, info.Name, info.Aliases) {
			return false
		}
		return len(policy.Allow) == 0 || named(policy.Allow, info.Name, info.Aliases)
	}
	var tools []tool.Tool
	// Concat, not append: BaseTools' slice belongs to the runtime and is
	// shared by concurrent children.
	for _, t := range slices.Concat(s.cfg.BaseTools(), s.Tools(ch.caller)) {
		if keep(t) {
			tools = append(tools, t)
		}
	}
	set, err := tool.NewSet(tools...)
	if err != nil {
		return nil, err
	}
	return ch.policy.Pool(set), nil
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

func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

func (s *Service) loopConfig(def agent.Definition, ch *child, tools *tool.Set, sessionID string, fork *tool.Turn) loop.Config {
	cfg := loop.Config{
		Model: ch.caller.Model, System: s.systemPrompt(def, ch), Tools: tools, Permit: &ch.policy,
		MaxTurns: def.MaxTurns, Agent: def.Name, MaxToolInputBytes: s.cfg.MaxToolInputBytes,
		Env: tool.Env{Cwd: ch.cwd, SessionID: sessionID},
	}
	if fork != nil {
		// Exactly the parent's rendered prompt and settings: the shared
		// prefix depends on it.
		cfg.System, cfg.MaxTokens, cfg.Thinking = fork.Request.System, fork.Request.MaxTokens, fork.Request.Thinking
	}
	if s.cfg.Compaction != nil {
		cfg.Compact = runner.Compactor(s.cfg.Compaction.ForModel(ch.caller.Ref.Model), cfg.Model, cfg.System, tools.Specs(), def.Name, s.spent(ch.caller))
	}
	return cfg
}

func (s *Service) systemPrompt(def agent.Definition, ch *child) string {
	base := strings.TrimSpace(def.Prompt)
	if ch.base != "" {
		base = strings.TrimSpace(ch.base)
	}
	_, gitErr := os.Stat(filepath.Join(ch.cwd, ".git"))
	return render(childSystemTmpl, map[string]any{
		"Prompt": base, "Name": def.Name, "Cwd": ch.cwd, "Git": gitErr == nil,
		"Platform": runtime.GOOS, "Date": s.cfg.Now().Format("2006-01-02"),
	})
}
