package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/fork"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/remote"
	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/spawnpolicy"
	"github.com/cadre-dev/cadre/internal/subagent/records"
	"github.com/cadre-dev/cadre/internal/subagent/remoteagent"
	"github.com/cadre-dev/cadre/internal/subagent/routing"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The spawn path (S-L1): routing, checks, the child's settings, its session
// and tools, then the launch of its run.

// SpawnRequest is one spawn call, whatever the surface.
type SpawnRequest struct {
	ToolUseID    string
	Description  string
	Prompt       string
	SubagentType string
	Model        string
	Cwd          string
	SessionID    string // continue this child session
	// AgentCall, for a continued agent, is the Agent call that first
	// launched it: its messages stay tagged with that call, as Claude
	// Code tags them, while its task lines name the call that resumed it.
	AgentCall  string
	Name       string // SendMessage name
	Background bool   // run_in_background
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
	// ToolsGrantNothing keeps Tools from being allow rules (an untrusted
	// project's command).
	ToolsGrantNothing bool
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
	// Teammate, when set, makes the run a teammate of that name on the
	// caller's team (team.go): its tools are the team's.
	Teammate string

	// CrossAgent says the call came through the gateway's sessions_spawn,
	// where allowAgents also bounds what may be named (S-P1).
	CrossAgent bool
	// cwdRecorded says Cwd is the continued session's own, not the model's.
	cwdRecorded bool
	// dispatched says the run was launched on another node and runs here
	// (dispatch.go): its session, prepared there, is new all the same.
	dispatched bool
}

// Outcome is a finished child run, or a launched one.
type Outcome struct {
	def       agent.Definition
	sessionID string
	res       *runner.Result
	warnings  []string
	task      *liveTask
	launched  bool
}

// Spawn starts a child and, in the foreground, waits for it (S-L1). It
// returns a launched outcome when the child runs in the background, from
// the start or after its foreground wait ended (S-L2).
func (s *Service) Spawn(ctx context.Context, c Caller, req SpawnRequest) (*Outcome, error) {
	if c.Leaf {
		return nil, fmt.Errorf("agent %q cannot start agents: the built-in agents are leaves; define an agent of your own to delegate from", c.Agent)
	}
	if s.remote(req) && req.Timeout == nil && !req.Foreground && req.SessionID == "" {
		// A remote call waits only when given a timeout (S-W2): the
		// other server may take any time.
		req.Background = true
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
	background := startsInBackground(req, r.def)
	t, err := s.launch(ctx, r, background)
	if err != nil {
		r.releaseMCP()
		return nil, err
	}
	out := &Outcome{def: r.def, sessionID: t.ID, warnings: r.warnings, task: t}
	if background {
		out.launched = true
		return out, nil
	}
	if s.waitForeground(ctx, t, wait, !req.Foreground) {
		out.launched = true
		return out, nil
	}
	out.res, _, _ = t.Outcome()
	return out, nil
}

// remote reports whether req runs on a remote agent: its call says
// isolation "remote" or its agent's definition names a url.
func (s *Service) remote(req SpawnRequest) bool {
	return s.router().Remote(req.Isolation, req.SubagentType, req.Fork != nil)
}

// router routes c's spawn calls (internal/subagent/routing).
func (s *Service) router() routing.Router {
	return routing.Router{Agents: s.cfg.Agents, Policy: &s.cfg.Policy, AllowAgents: s.cfg.Settings.AllowAgents, Index: s.cfg.Index}
}

// whom is c as the router knows it.
func whom(c Caller) routing.Caller { return routing.Caller{Agent: c.Agent, TaskRules: c.TaskRules} }

// child is everything decided about a run before it starts.
type child struct {
	caller Caller
	cwd    string
	base   string // prompt base from the workspace, if any
	policy permission.Policy
	// memory is the agent's memory directory (memory: scope), or "".
	memory string
}

// prepare decides everything about a child before it starts: where it
// works, its model, its mode and its rules (internal/spawnpolicy), and its
// memory.
func (s *Service) prepare(c Caller, def agent.Definition, req SpawnRequest) (*child, []string, error) {
	parent := s.cfg.Policy
	if c.Workspace != "" {
		parent.Workspace = c.Workspace
	}
	place, err := spawnpolicy.Where(parent, s.cfg.MainCwd, def, c.Cwd, req.Cwd, req.cwdRecorded)
	if err != nil {
		return nil, nil, err
	}
	root, cwd := place.Root, place.Cwd
	models := spawnpolicy.Models{Resolve: s.cfg.Resolve, Parse: s.cfg.ParseModel, Default: s.cfg.Settings.Model}
	model, ref, warnings, err := models.Choose(req.Model, def.Model, c.Model, c.Ref)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %q: %w", def.Name, err)
	}
	if def.URL != "" {
		// A remote agent's one "model" is the server at its url (S-W2):
		// each turn sends the message there and its answer is the reply.
		ra, err := remote.New(remote.Config{Name: def.Name, URL: def.URL, Headers: def.Headers, Ask: remoteagent.Ask(s.asker(c), def.Name)})
		if err != nil {
			return nil, nil, err
		}
		model, ref, warnings = ra, provider.Ref{Provider: "a2a", Model: def.Name}, nil
	}
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
	pol, err := spawnpolicy.Rules(s.cfg.Policy, mode, root, parent.Workspace, def, req.Tools, req.ToolsGrantNothing)
	if err != nil {
		return nil, nil, err
	}
	var memDir string
	if req.Fork == nil {
		if memDir, err = spawnpolicy.Memory(def, s.cfg.MainCwd, &pol); err != nil {
			return nil, nil, err
		}
	}
	taskRules, err := spawnpolicy.TaskRules(def)
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.CheckPrice != nil {
		if err := s.cfg.CheckPrice(ref); err != nil {
			return nil, nil, fmt.Errorf("agent %q: %w", def.Name, err)
		}
	}
	return &child{
		caller: Caller{
			RootSessionID: c.RootSessionID, Agent: def.Name, Depth: c.Depth + 1,
			Model: model, Ref: ref, Mode: mode, Cwd: cwd, Workspace: root, TaskRules: taskRules, Totals: c.Totals, Group: c.Group,
			RootTranscriptPath: c.RootTranscriptPath,
			Fork:               req.Fork != nil, Leaf: def.Source == agent.SourceBuiltin,
			Teammate: req.Teammate,
		},
		cwd: cwd, base: place.PromptBase, policy: pol, memory: memDir,
	}, warnings, nil
}

// create makes the child session (records.Session: its parent, key and
// title). A background child's record waits for its task's, to be
// written with it (records/).
func (s *Service) create(ctx context.Context, c Caller, def agent.Definition, ch *child, description string, background bool) (*session.Session, error) {
	info := records.Session(ids.New(), c.SessionID, def.Name, ch.cwd, ch.caller.Ref.String(), description)
	if background && s.records.Joint() {
		// Its transcript is created when it runs (ready): a run that
		// waits for a place in the lane holds no file until then.
		return s.cfg.Sessions.Prepare(info)
	}
	return s.cfg.Sessions.Create(ctx, info)
}

// pool rebuilds the child's tools (S-P2): every available tool, filtered
// by the definition's tools / disallowedTools, the subagent tool policy
// and the global deny rules; a spawn tool only for non-leaves whose
// definition allows it.
func (s *Service) pool(def agent.Definition, ch *child, fork *tool.Turn, only []string, own []tool.Tool) (*tool.Set, error) {
	if fork != nil {
		// The fork agent alone reuses the parent's exact tools (S-P2).
		return s.forkTools(fork, ch.caller, only)
	}
	// A teammate's team tools come with being on the team, whatever its
	// definition lists; deny rules still hold.
	filter := spawnpolicy.Tools{Def: def, Settings: s.cfg.Settings.Tools, Only: only}
	if tm := s.teams(); ch.caller.Teammate != "" && tm != nil {
		filter.Team = tm.TeamTool
	}
	var tools []tool.Tool
	// Concat, not append: BaseTools' slice belongs to the runtime and is
	// shared by concurrent children.
	// Its Bash runs its background commands as its own tasks.
	for _, t := range slices.Concat(s.BindShells(ch.caller, s.cfg.BaseTools()), own, s.Tools(ch.caller)) {
		if filter.Keep(t.Info()) {
			tools = append(tools, t)
		}
	}
	set, err := tool.NewSet(tools...)
	if err != nil {
		return nil, err
	}
	return ch.policy.Pool(set), nil
}

// run is a child that passed every check and is ready to start.
type run struct {
	// tree is the run's git worktree (isolation: worktree), or nil.
	tree *worktree.Tree
	// reservations are released by launch (or by begin when it fails).
	reservations []string
	c            Caller
	req          SpawnRequest
	def          agent.Definition
	child        *child
	sess         *session.Session
	history      []llm.Message
	tools        *tool.Set
	warnings     []string
	// first is the child's first user message (childsetup.Setup.FirstMessage).
	first llm.Message
	// laneHeld says the run holds its lane place already (RunDispatched).
	laneHeld bool
	// mcpTools are the tools of the definition's own MCP servers, which
	// releaseMCP stops when the run ends.
	mcpTools []tool.Tool
	mcpStop  func()
}

// releaseMCP stops the run's own MCP servers, once.
func (r *run) releaseMCP() {
	if r.mcpStop != nil {
		r.mcpStop()
		r.mcpStop = nil
	}
}

// begin does everything a spawn needs before the child can run: routing,
// the spawn permission, depth and child limits, the child's settings, its
// session (new, or reopened to continue it) and its tool pool.
func (s *Service) begin(ctx context.Context, c Caller, req SpawnRequest) (*run, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, errors.New("prompt is empty: say what the agent should do")
	}
	c = c.current()
	var def agent.Definition
	var err error
	switch {
	case req.Fork != nil:
		def = fork.Definition()
	case req.SessionID != "":
		var cwd string
		def, cwd, err = s.router().Continued(ctx, whom(c), routing.Continue{
			SessionID: req.SessionID, SubagentType: req.SubagentType, Cwd: req.Cwd,
			InTree: func(ctx context.Context, id string) error { return s.InTree(ctx, c, id) },
		})
		if cwd != "" {
			// A continued agent goes on where it worked before (its
			// worktree, while it is kept).
			req.Cwd, req.cwdRecorded = cwd, true
		}
	default:
		def, err = s.router().Route(whom(c), req.SubagentType)
	}
	if err != nil {
		return nil, err
	}
	if req.Isolation == agent.IsolationRemote {
		if err := s.router().CheckRemote(whom(c), def); err != nil {
			return nil, err
		}
	}
	pol := s.policy(c)
	if err := pol.PermitSpawn(ctx, def.Name, c.TaskRules); err != nil {
		return nil, s.router().WithAllowed(whom(c), req.CrossAgent, err)
	}
	if c.Depth+1 > s.depth {
		return nil, fmt.Errorf("maximum spawn depth exceeded (max=%d): %s cannot spawn agents", s.depth, c.Agent)
	}
	ch, warnings, err := s.prepare(c, def, req)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, req: req, def: def, child: ch, warnings: warnings, first: llm.UserText(req.Prompt)}
	if (req.SessionID == "" || req.dispatched) && req.Fork == nil {
		// A continued agent had its initialPrompt and skills when it began.
		var more []string
		r.first, more = s.setup().FirstMessage(def, req.Prompt)
		r.warnings = append(r.warnings, more...)
	}
	ok := false
	defer func() {
		if !ok {
			s.runs.Unreserve(r.reservations)
			r.releaseMCP()
		}
	}()
	if key, err := s.reserveChild(c); err != nil {
		return nil, err
	} else if key != "" {
		r.reservations = append(r.reservations, key)
	}
	if req.Name != "" {
		key, err := s.runs.ReserveName(c.RootSessionID, req.Name, req.SessionID)
		if err != nil {
			return nil, err
		}
		r.reservations = append(r.reservations, key)
	}
	if req.SessionID != "" {
		if !s.runs.Reserve("session\x00"+req.SessionID, req.SessionID) {
			return nil, fmt.Errorf("agent %s is still running; send it a message with SendMessage, or wait for its result", req.SessionID)
		}
		r.reservations = append(r.reservations, "session\x00"+req.SessionID)
		if r.sess, r.history, err = s.cfg.Sessions.Open(ctx, req.SessionID); err != nil {
			return nil, err
		}
	} else if r.sess, err = s.create(ctx, c, def, ch, req.Description, startsInBackground(req, def)); err != nil {
		return nil, err
	}
	if iso := cmp.Or(req.Isolation, def.Isolation); iso == "worktree" {
		if err := s.isolate(ctx, r); err != nil {
			s.endSession(ctx, r.sess, session.StatusFailed)
			return nil, err
		}
	}
	ch.caller.SessionID = r.sess.Info.ID
	ch.caller.AgentID = r.sess.Info.ID
	// The child asks through its parent's asker, naming itself, at any
	// depth; it shares the conversation's grants.
	ch.policy.Asker = permission.Identify(s.asker(c), permission.Identity{Agent: def.Name, AgentID: r.sess.Info.ID, ParentToolUseID: req.ToolUseID})
	ch.caller.Asker, ch.caller.Remembered, ch.policy.Remembered = ch.policy.Asker, c.Remembered, c.Remembered
	switch {
	case req.Fork != nil:
		r.history = fork.History(req.Fork)
	case req.History != nil && req.SessionID == "":
		r.history = req.History
	}
	if s.cfg.MCP != nil && req.Fork == nil {
		// The fork reuses its parent's exact tools; every other child gets
		// its definition's own servers, and its required ones checked.
		var warns []string
		r.mcpTools, r.mcpStop, warns, err = s.cfg.MCP.ForAgent(ctx, def)
		r.warnings = append(r.warnings, warns...)
		if err != nil {
			s.endSession(ctx, r.sess, session.StatusFailed)
			return nil, fmt.Errorf("agent %q: %w", def.Name, err)
		}
	}
	if req.Fork != nil || !startsInBackground(req, def) {
		// A background run builds its tools when it starts (ready):
		// one waiting for a lane place holds no tool set.
		if r.tools, err = s.pool(def, ch, req.Fork, req.Tools, r.mcpTools); err != nil {
			s.endSession(ctx, r.sess, session.StatusFailed)
			return nil, err
		}
	}
	ok = true
	return r, nil
}

// launch starts r in the caller's group. A background run gets its task
// record before it starts, so nothing can finish a task that was never
// recorded.
func (s *Service) launch(ctx context.Context, r *run, background bool) (*liveTask, error) {
	id := r.sess.Info.ID
	kind := task.KindLocalAgent
	if r.def.URL != "" {
		kind = task.KindRemoteAgent
	}
	t := &liveTask{Live: runs.New(runs.Info{
		ID: id, ParentAgentID: r.c.AgentID, ParentSessionID: r.c.SessionID, RootSessionID: r.c.RootSessionID,
		ToolUseID: r.req.ToolUseID, AgentCall: s.agentCall(id, r.req), AgentType: r.def.Name, Description: r.req.Description, Prompt: r.req.Prompt,
		Name: r.req.Name, OutputFile: s.files().For(r.sess.Info), Depth: r.child.caller.Depth, Cleanup: r.req.Cleanup, Kind: kind,
	}, runs.Options{Background: background, Started: s.cfg.Now(), Group: r.c.Group}), detached: r.req.dispatched}
	// The reservations end once the run is tracked (or failed to start):
	// from then on the run itself, and its record, hold the name and the
	// session.
	defer s.runs.Unreserve(r.reservations)
	if background && !r.laneHeld && s.dispatchable(r) {
		// Any node with a free place runs it, this one included: the
		// job queue's per-node worker limit is the lane (dispatch.go).
		// The node that runs it continues its transcript.
		if err := r.sess.Claim(ctx); err != nil {
			s.endSession(ctx, r.sess, session.StatusFailed)
			return nil, err
		}
		if err := s.launchElsewhere(ctx, r, t); err != nil {
			return nil, err
		}
		// Not tracked: the run itself is, by the node that runs it
		// (this one too, perhaps); here only its group counts it.
		s.adopt(r, t)
		s.events.Started(t.Info, true)
		runCtx, cancel := context.WithCancelCause(r.c.Group.Context())
		t.SetCancel(cancel)
		r.c.Group.Go(func() { s.standin(t).Await(runCtx, t.Live, t) })
		return t, nil
	}
	// The inbox opens before the run is recorded or tracked: whoever
	// finds it running, here or through its record in another process,
	// can queue a message for it, even while it waits for a lane slot.
	if background && s.records.OpensInboxes() && !r.sess.IsRecorded() && !r.req.dispatched {
		// The write that records it opens it (record).
		t.inbox = mailbox.Subscribe(ctx, s.cfg.Mailbox, id, s.log)
	} else {
		t.inbox = mailbox.Open(ctx, s.cfg.Mailbox, id, s.cfg.Owner, s.log)
	}
	if background {
		// A free lane slot is taken now, so that the first write
		// records the run as running (records/); a run that waits for
		// one gets its tools and files when it starts (ready).
		status := task.StatusPending
		if r.laneHeld || s.lane.TryAcquire() {
			t.laneHeld, status = true, task.StatusRunning
		}
		if !t.laneHeld {
			t.MarkQueued() // not shared yet
		}
		if err := s.enter(ctx, t, r, status); err != nil {
			if t.laneHeld {
				s.lane.Release()
			}
			t.CloseOutput()
			t.inbox.Close(ctx, false)
			s.endSession(ctx, r.sess, session.StatusFailed)
			return nil, err
		}
	}
	// The run lives as long as its group, not as long as this call; in
	// the trace it stays the child of this call, which a background run
	// outlives (telemetry.Within).
	runCtx, cancel := context.WithCancelCause(telemetry.Within(r.c.Group.Context(), ctx))
	t.SetCancel(cancel)
	s.track(t)
	s.adopt(r, t)
	// Announced once listed: a front end that lists the subagents when
	// it hears of one finds it. A run dispatched here was announced by
	// the node that launched it.
	if !r.req.dispatched {
		s.events.Started(t.Info, background)
	}
	if !background {
		s.start(runCtx, t, r)
		return t, nil
	}
	// Started once its batch of calls has launched all it launches
	// (tool.Launches); its group waits for it meanwhile.
	held := r.c.Group.Hold()
	tool.AfterLaunches(ctx, func() {
		defer held()
		s.start(runCtx, t, r)
	})
	return t, nil
}

// enter records a background run launched here as status: pending, or
// running and made ready when it took its lane slot at once.
func (s *Service) enter(ctx context.Context, t *liveTask, r *run, status task.Status) error {
	if t.laneHeld {
		if err := s.ready(ctx, t, r); err != nil {
			return err
		}
	}
	if r.req.dispatched {
		// RunDispatched claimed the record, running; its output is here
		// now.
		return s.claimOutput(ctx, t)
	}
	return s.record(ctx, t, status, r.sess)
}

// ready gives a background run about to start what it runs with, which
// a run waiting for a lane place goes without: its tool set, its
// transcript (Session.Claim), and its output file, the transcript under a
// second name (output.go); with the transcript in a store there is no
// output file at all.
func (s *Service) ready(ctx context.Context, t *liveTask, r *run) error {
	if r.tools == nil {
		var err error
		if r.tools, err = s.pool(r.def, r.child, r.req.Fork, r.req.Tools, r.mcpTools); err != nil {
			return err
		}
	}
	if err := r.sess.Claim(ctx); err != nil {
		return err
	}
	if t.OutputFile != "" && !runlog.LinkOutput(r.sess.Info.TranscriptPath, t.OutputFile) {
		return t.OpenOutput()
	}
	return nil
}

// agentCall is the Agent call that first launched agent id: the one the
// request names, else the one this process saw, else the request's own.
func (s *Service) agentCall(id string, req SpawnRequest) string {
	return s.runs.AgentCall(id, req.AgentCall, req.ToolUseID)
}

// record writes (or rewrites, for a continued agent) t's task record; the
// caller announces the run once it is listed. A child session not yet
// recorded (sess, when not nil) is recorded in the same write
// (internal/subagent/records).
func (s *Service) record(ctx context.Context, t *liveTask, status task.Status, sess *session.Session) error {
	owner := s.cfg.Owner
	if t.elsewhere {
		owner = "" // the node that claims it (RunDispatched)
	}
	rec := records.Task(t.Info, t.TaskKind(), status, owner, s.cfg.Now(), t.Started())
	// Once decided, the record is written even if the caller's turn ends.
	return s.records.Start(ctx, rec, sess, t.inbox.OpensWithRecord())
}

// startsInBackground reports whether req, for def, is launched as a
// background task rather than run in the foreground.
func startsInBackground(req SpawnRequest, def agent.Definition) bool {
	return !req.Foreground && (req.Background || def.Background || (req.Timeout != nil && *req.Timeout == 0))
}
