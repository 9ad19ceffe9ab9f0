package app

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

	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/cluster"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/contextfiles"
	"github.com/cadre-dev/cadre/internal/dispatch"
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
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Config is what the runtime is built from: the SDK's Options, checked
// and turned into the internal packages' terms.
type Config struct {
	// Cwd is the working directory, absolute and existing.
	Cwd    string
	Getenv func(string) string
	Now    func() time.Time
	Logger *slog.Logger
	// Version is cadre's, for telemetry and MCP servers.
	Version        string
	TracerProvider trace.TracerProvider
	HTTPClient     *http.Client

	// Overrides and SettingSources are the settings' flags and files.
	Overrides      config.Overrides
	SettingSources []string
	// Trusted is the user's trust in the project; TrustWarning what a run
	// says when it is not.
	Trusted      bool
	TrustWarning string

	// LLM is the program's own main model, if any.
	LLM llm.Model
	// Agent names the definition the main agent runs as (--agent);
	// SystemPrompt and PermissionMode are the caller's, which win over
	// that definition's.
	Agent, SystemPrompt, PermissionMode string
	FallbackModel                       string
	// MaxBudgetUSD refuses models without a price (CheckPrice).
	MaxBudgetUSD float64
	JSONSchema   json.RawMessage
	Coordinator  bool
	// Tools are added to the built-ins; ToolNames, when not nil, is the
	// whole pool (--tools).
	Tools     []tool.Tool
	ToolNames []string
	// Hooks are the program's hooks (Options.Hooks), after the settings'.
	Hooks hook.Config
	// Declared and Factories are the program's agent definitions.
	Declared  []agent.Definition
	Factories []func() ([]agent.Definition, error)

	MCPConfig       []string
	StrictMCPConfig bool
	// Ephemeral keeps the runtime's state in a scratch directory Close
	// removes.
	Ephemeral bool
	// Dispatch is the front end's default for store.dispatch ("" sticky).
	Dispatch string
	// Replay, when set, is a replay's: the model of every agent and a
	// wrapper of the tools.
	Replay *Replay
}

// Replay is what a replay puts into the runtime it opens.
type Replay struct {
	Model llm.Model
	Ref   provider.Ref
	Tools func([]tool.Tool) []tool.Tool
}

// App is a built runtime's parts. Its fields are set by New and not
// changed after, but for those the comments say.
type App struct {
	Cwd  string
	Home string // the user's home directory
	Cfg  *config.Loaded
	// SystemPrompt is Config's, else the main agent definition's.
	SystemPrompt string
	// DefaultModel is set when no flag or setting named the main model,
	// so config.DefaultModel is used: its errors say so.
	DefaultModel bool
	// MainAgent is the definition the main agent runs as (Config.Agent).
	MainAgent *agent.Definition

	Getenv func(string) string
	Now    func() time.Time
	Log    *slog.Logger
	Tracer telemetry.Tracer

	Sandbox  *sandbox.Runner
	DB       Store
	Sessions *session.Manager
	Bus      *event.Bus
	Policy   permission.Policy
	Pricing  provider.Pricing
	Queue    *queue.Queue
	Owner    *task.Owner
	// Node is this process's membership of the cluster of processes
	// sharing a PostgreSQL store (River); nil with the SQLite store.
	Node *cluster.Node

	// BaseTools are the built-in tools and Config.Tools.
	BaseTools []tool.Tool
	// OwnSkill says BaseTools holds cadre's Skill tool (not one of
	// Config.Tools): the main agent's forks its context: fork skills.
	OwnSkill    bool
	Coordinator bool
	// Commands are the slash commands and skills; the SDK's
	// ReloadCommands replaces them.
	Commands *command.Set
	// Grants are the allow rules sessions gained by invoking skills.
	Grants *permission.Grants
	// Context is the context files' block every conversation opens with.
	Context []llm.Block
	// Warnings are problems found while opening; settle adds the
	// worktree report before Reported closes.
	Warnings []string
	// Agents is the registry; AgentLoad how it was loaded (CreateAgent
	// loads again and replaces Agents).
	Agents    *agent.Registry
	AgentLoad agent.LoadOptions
	Subagents *subagent.Service
	Hooks     *hook.Engine // nil when no hook is set
	MCP       *MCP

	// RunDir holds the owner locks of this CADRE_HOME's processes;
	// Scratch is an ephemeral runtime's state, removed by Close.
	RunDir, Scratch string

	cfg Config

	// reported is closed once the worktree report is in Warnings;
	// settledCh once all of settle's work is done, with settleErr set.
	reported, settledCh chan struct{}
	settleErr           error

	modelMu sync.Mutex
	models  map[string]resolved // by name: spawning must not rebuild SDK clients
	// noticed holds the deprecated models ("provider:id") the user was
	// already warned of: once each.
	noticed map[string]bool

	closers closers
}

type resolved struct {
	model llm.Model
	ref   provider.Ref
}

// New builds the runtime's parts. On an error, what was built is undone.
func New(ctx context.Context, c Config) (_ *App, err error) {
	cfg, err := config.Load(config.LoadOptions{Cwd: c.Cwd, Getenv: c.Getenv, Sources: c.SettingSources, Overrides: c.Overrides, Trusted: c.Trusted})
	if err != nil {
		return nil, err
	}
	if c.MaxBudgetUSD < 0 {
		return nil, fmt.Errorf("max budget must be positive, got %g USD", c.MaxBudgetUSD)
	}
	if fb := strings.TrimSpace(c.FallbackModel); fb != "" && fb == cfg.Settings.Model {
		return nil, fmt.Errorf("fallback model %q is the main model: name a different model", fb)
	}
	defaultModel := cfg.Settings.Model == ""
	if defaultModel {
		cfg.Settings.Model = config.DefaultModel
	}
	if len(c.JSONSchema) > 0 {
		// Checked now: a bad schema is a start failure, not a run's.
		if _, err := structured.New(c.JSONSchema); err != nil {
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
	a := &App{
		Cwd: c.Cwd, Home: home, Cfg: cfg, SystemPrompt: c.SystemPrompt, DefaultModel: defaultModel,
		Getenv: c.Getenv, Now: c.Now, Log: c.Logger, Tracer: telemetry.New(c.TracerProvider, c.Version),
		Bus: &event.Bus{},
		Policy: permission.Policy{
			Mode: mode, Rules: rules, Task: s.Permissions.Task, Workspace: c.Cwd, Project: c.Cwd,
			AdditionalDirs: s.Permissions.AdditionalDirectories, Home: home, ConfigDirs: []string{cfg.Home},
		},
		cfg: c, models: map[string]resolved{},
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.closers.unwind())
		}
	}()
	if c.TrustWarning != "" {
		a.Warnings = append(a.Warnings, c.TrustWarning)
	}
	// The launch text points the model to its task's output file, under
	// CADRE_HOME and so outside the workspace. The service, made below
	// (with this policy), knows which files are whose.
	a.Policy.ReadableFile = func(ctx context.Context, sessionID, path string) bool {
		return a.Subagents != nil && a.Subagents.OwnOutput(ctx, sessionID, path)
	}
	a.Sandbox = newSandbox(c.Cwd, home, cfg, rules)
	a.closers.push(a.Sandbox.Close)
	// Every command started for a model (Bash, hooks, MCP servers) runs
	// without the variables that hold provider keys: a child on its own
	// account must not be able to print its key, or the main one.
	a.Sandbox.HideEnv = provider.KeyVariables(a.ProviderConfig())
	switch {
	case a.Sandbox.Mode == sandbox.ModeAuto && !a.Sandbox.Status.Available():
		a.Warnings = append(a.Warnings, "the sandbox is unavailable, so commands run under the permission rules alone: "+a.Sandbox.Status.Reason+
			" (set sandbox.mode to \"required\" to refuse them instead, or \"off\" to silence this; see `cadre sandbox status`)")
	case a.Sandbox.Active() && s.Sandbox.AutoAllowBashIfSandboxed:
		a.Policy.Sandboxed = a.Sandbox.Sandboxes
	}
	// The asker is each conversation's (Options.Permission, or its
	// OpenRequest's): Policy has none, so nothing asks through it.
	a.Pricing.Overrides = map[string]provider.Price{}
	for name, p := range s.Pricing {
		a.Pricing.Overrides[name] = provider.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	// A deprecated main model is told at start, with the other warnings;
	// a retired one fails its first run with the replacement named.
	if pc := a.ProviderConfig(); c.LLM == nil {
		if ref, err := provider.Parse(s.Model, pc); err == nil {
			if w := a.notice(pc, ref); w != "" {
				a.Warnings = append(a.Warnings, w)
			}
		}
	}
	dispatchTo, err := dispatchMode(s.Store.Dispatch, c.Dispatch)
	if err != nil {
		return nil, err
	}
	// state is where the runtime writes: the state dir, or a scratch
	// directory of an ephemeral runtime.
	state, storeURL, storeEnv := cfg.Home, s.Store.URL, c.Getenv
	if c.Ephemeral {
		if state, err = os.MkdirTemp("", "cadre-ephemeral-"); err != nil {
			return nil, fmt.Errorf("ephemeral runtime: %w", err)
		}
		a.Scratch = state
		a.closers.push(func() error { return os.RemoveAll(state) })
		// No PostgreSQL either: an ephemeral run shares nothing.
		storeURL, storeEnv = "", func(string) string { return "" }
	}
	if a.DB, err = openStore(ctx, state, storeURL, storeEnv, a.Log); err != nil {
		return nil, err
	}
	a.closers.push(a.DB.Close)
	a.RunDir = filepath.Join(state, "run")
	if a.Owner, err = task.ClaimOwner(a.RunDir); err != nil {
		return nil, fmt.Errorf("claim the task owner lock: %w", err)
	}
	a.closers.push(a.Owner.Close)
	a.Sessions = session.NewManagerWith(a.DB, transcriptsOf(a.DB, state, a.Owner.ID(), s.Store.OrphanAfter()), c.Now, nil)
	a.Sessions.SetOwner(a.Owner.ID())
	a.Queue = &queue.Queue{}

	var env []string
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	if a.BaseTools, err = withTools(builtin.Tools(builtin.Options{
		Env: env, Sandbox: a.Sandbox,
		// Off by default: a model's fetch must not reach the user's machine
		// or network (docs/settings.md); tests and local setups turn it on.
		WebFetchAllowPrivate: c.Getenv("CADRE_WEBFETCH_ALLOW_PRIVATE") == "1",
	}), c.Tools); err != nil {
		return nil, err
	}
	if a.Hooks, err = a.hookEngine(env); err != nil {
		return nil, err
	}
	a.BaseTools = slices.DeleteFunc(a.BaseTools, func(t tool.Tool) bool { return !Offered(t, c.ToolNames) })
	if c.Replay != nil && c.Replay.Tools != nil {
		a.BaseTools = c.Replay.Tools(a.BaseTools)
	}
	var problems []command.Problem
	a.Commands, problems = command.Load(c.Cwd, cfg.Home)
	if !c.Trusted {
		a.Commands = a.Commands.Narrowed(func(c *command.Command) { trust.NarrowCommand(c) })
	}
	for _, p := range problems {
		a.Warnings = append(a.Warnings, "command "+p.Error())
	}
	for _, cmd := range a.Commands.All() {
		for _, w := range cmd.Warnings {
			a.Warnings = append(a.Warnings, fmt.Sprintf("command %s: %s", cmd.Path, w))
		}
	}
	// The Skill tool lists the skills it can load, so it exists once they
	// are loaded, and only when there are some; it obeys --tools as the
	// built-ins do.
	a.Grants = &permission.Grants{}
	a.Policy.Grants = a.Grants
	if st := skill.Tool(a.Commands, a.Grants, nil); st != nil && Offered(st, c.ToolNames) && !hasTool(a.BaseTools, skill.Name) {
		a.BaseTools = append(a.BaseTools, st)
		a.OwnSkill = true
	}
	files, ctxProblems := contextfiles.Load(contextfiles.Options{Cwd: c.Cwd, Home: home, StateDir: cfg.Home})
	for _, p := range ctxProblems {
		a.Warnings = append(a.Warnings, "context file "+p)
	}
	a.Context = contextfiles.Blocks(files)
	if err := a.loadAgents(); err != nil {
		return nil, err
	}
	if err := a.openMCP(); err != nil {
		return nil, err
	}
	a.closers.push(func() error { a.MCP.manager.Close(); return nil })
	a.Coordinator = c.Coordinator || s.Subagents.Coordinator || Switch(c.Getenv("CADRE_COORDINATOR_MODE"))
	if surface := s.Subagents.Surface; a.Coordinator && surface != "" && surface != config.SurfaceClaude {
		// Its tools are the claude profile's: under another profile the
		// main agent would keep nothing to orchestrate with.
		a.Warnings = append(a.Warnings, fmt.Sprintf("coordinator mode needs subagents.surface %q, not %q: it is off", config.SurfaceClaude, surface))
		a.Coordinator = false
	}
	worker := dispatchWorker(a.DB, dispatchTo)
	// The node starts after the service (its worker hands runs to it) but
	// stops after it: the runs it works stop while it still heartbeats for
	// them. Its undo goes first, so that it unwinds last.
	a.closers.push(func() error {
		if a.Node == nil {
			return nil
		}
		return a.Node.Close()
	})
	if a.Subagents, err = a.subagentService(state, files, worker); err != nil {
		return nil, err
	}
	a.closers.push(func() error { a.Subagents.Close(); return nil })
	if a.Node, err = startNode(ctx, a.DB, a.Owner.ID(), s.Store, a.Log, worker, s.Subagents.Lane()); err != nil {
		return nil, err
	}
	if worker != nil {
		worker.Bind(a.Subagents)
	}
	a.settle(context.WithoutCancel(ctx))
	// Close waits for the start-up work: it uses the store, so it ends
	// before the store closes. Its error is Close's.
	a.closers.push(func() error {
		<-a.settledCh
		return a.settleErr
	})
	a.Log.Debug("runtime opened", "cwd", c.Cwd, "state_dir", cfg.Home, "scratch", a.Scratch, "model", s.Model, "tools", len(a.BaseTools))
	return a, nil
}

// subagentService builds the subagent service: every setting and part a
// child run needs. One function, so that a change in how the service is
// built stays here.
func (a *App) subagentService(state string, files []contextfiles.File, worker *dispatch.Worker) (*subagent.Service, error) {
	s, getenv := a.Cfg.Settings, a.Getenv
	mailbox, watch := crossProcess(a.DB)
	// The tool surface (DESIGN §12) is a package of its own.
	profile, err := profiles.For(s.Subagents.Surface)
	if err != nil {
		return nil, err
	}
	return subagent.New(subagent.Config{
		Profile: profile,
		Bus:     a.Bus, Now: a.Now, Sessions: a.Sessions, Index: a.DB, Agents: a.Agents,
		Settings: s.Subagents, Policy: a.Policy, Resolve: a.Model, Pricing: a.Pricing, CheckPrice: a.CheckPrice(),
		ParseModel: func(name string) (provider.Ref, error) { return provider.Parse(name, a.ProviderConfig()) },
		// A child gets the MCP tools connected when it spawns: a server
		// that stopped is gone from later pools.
		BaseTools: func() []tool.Tool { return slices.Concat(a.BaseTools, a.MCPTools()) }, MainCwd: a.Cwd,
		MCP:   mcpForAgents{a},
		Tasks: a.DB, Queue: a.Queue, Owner: a.Owner.ID(), OutputDir: filepath.Join(state, "tasks"),
		ShellMaxOutputBytes: s.BackgroundShell.MaxOutputBytes,
		Mailbox:             mailbox, Watch: watch,
		// A coordinator never forks (S-F1).
		Fork:        (s.Subagents.Fork || Switch(getenv("CADRE_FORK_SUBAGENT"))) && !a.Coordinator,
		Coordinator: a.Coordinator,
		// Claude Code's own switch turns cadre's teams on too.
		Teams:             s.Subagents.Teams || Switch(getenv("CADRE_AGENT_TEAMS")) || Switch(getenv("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS")),
		TaskLists:         a.DB,
		Compaction:        Compaction(s.Compaction),
		MaxToolInputBytes: s.Limits.MaxToolInputBytes,
		ContextFiles:      files,
		Commands:          a.Commands,
		Logger:            a.Log,
		Hooks:             a.Hooks,
		ProjectHooks:      a.Cfg.ProjectHooks(),
		DisableAllHooks:   s.DisableAllHooks,
		Tracer:            a.Tracer,
		Dispatch:          a.dispatcher(worker),
	})
}

// Close undoes what New built, last built first: the start-up work ends,
// then the runs, the MCP servers, the cluster node, the owner lock, the
// store, the sandbox and an ephemeral runtime's scratch directory.
func (a *App) Close() error { return a.closers.unwind() }

// settle starts, in a goroutine the App owns (Close waits for it), the
// start-up work that no new run needs before its first model request: the
// report of leftover worktrees, the recovery of what ended processes left
// running, and the archive sweep. What needs their result waits: Warnings
// for the report; resuming or continuing a session, and listing or reading
// sessions and tasks, for all of it (see Settled).
func (a *App) settle(ctx context.Context) {
	a.reported, a.settledCh = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(a.settledCh)
		a.reportWorktrees(ctx)
		close(a.reported)
		err := a.recover(ctx)
		// Archiving is swept whenever cadre opens its store: no process has
		// to stay up for archiveAfterMinutes (S-S3).
		if _, serr := a.Subagents.Sweep(ctx, a.Now()); serr != nil {
			err = errors.Join(err, fmt.Errorf("archive finished subagent sessions: %w", serr))
		}
		if err != nil {
			// A new run does not wait for this work, and a CLI that ends
			// with Close does not read its error: the logger must hear it.
			a.Log.WarnContext(ctx, "start-up recovery and archive sweep", "err", err)
		}
		a.settleErr = err
	}()
}

// Settled waits until the start-up work is done and returns its error, or
// ctx's.
func (a *App) Settled(ctx context.Context) error {
	select {
	case <-a.settledCh:
		return a.settleErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reported is closed once the worktree report is in Warnings.
func (a *App) Reported() <-chan struct{} { return a.reported }

// recover fails the tasks a crashed cadre left running, with their child
// sessions, and the other sessions such processes left running. Every
// runtime runs it (in settle), so nothing stays "running" after a crash.
// With SQLite a process has ended when its owner lock is free; with
// PostgreSQL, shared by processes on many machines, when its node record
// says it left or went silent (cluster.Sweep, which the cluster's leader
// also runs periodically), or when it was a process of this CADRE_HOME
// whose lock is free.
func (a *App) recover(ctx context.Context) error {
	runDir := a.RunDir
	if a.Node != nil {
		// A lock file of this CADRE_HOME left free is a process of this
		// machine that crashed: its work need not wait for the timeout.
		ended := func(owner string) bool { return task.Ended(runDir, owner) }
		_, err := cluster.Sweep(ctx, a.DB.(*postgres.DB), a.Node.OrphanAfter(), ended)
		if err != nil {
			return fmt.Errorf("recover the work of lost nodes: %w", err)
		}
		return nil
	}
	orphans, terr := task.Recover(ctx, a.DB, runDir, a.Now())
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
	_, serr := session.Recover(ctx, a.DB, alive, children, a.Now())
	if serr != nil {
		serr = fmt.Errorf("recover sessions of ended processes: %w", serr)
	}
	return errors.Join(terr, serr)
}

// reportWorktrees warns about subagent worktrees of this repository that
// no running task owns: left by a run that could not settle them (a crash).
// They hold work, so they are reported, never removed.
func (a *App) reportWorktrees(ctx context.Context) {
	trees, err := worktree.Sweep(ctx, a.Cwd)
	if err != nil {
		return // not a git repository, or no git: nothing to report
	}
	for _, t := range trees {
		name := filepath.Base(t.Path)
		// Recovery may not have failed the task of a crashed run yet: its
		// owner's lock or node record says whether the run is still going,
		// in some process.
		if rec, err := a.DB.GetTask(ctx, name); err == nil && !rec.Status.Terminal() && a.OwnerAlive(ctx, rec.Owner) {
			continue
		}
		a.Warnings = append(a.Warnings, fmt.Sprintf("subagent worktree %s (branch %s) was left by an earlier run; review it, then remove it with git worktree remove", t.Path, t.Branch))
	}
}

// Switch reads a switch such as CADRE_FORK_SUBAGENT: 1, true, yes or on
// turns it on.
func Switch(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
