package cadre

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/replay"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/tool"
)

// Replay (docs/replay.md) runs a recorded session again offline: the
// recorded model turns are fed back instead of calling a provider, the
// tools run again for real in a scratch copy of the workspace, and the
// report says where the run diverged from the recording.

// ReplayTools says which tools a replay runs again.
type ReplayTools string

const (
	// ReplayToolsAll runs every tool again (the default).
	ReplayToolsAll ReplayTools = "all"
	// ReplayToolsReadOnly runs only the tools that read files (and the
	// Agent tool, so subagents start again); the others answer with their
	// recorded results.
	ReplayToolsReadOnly ReplayTools = "read-only"
)

// ReplayOptions says what to replay and how.
type ReplayOptions struct {
	// Options opens the replay's runtime: the state dir (through Getenv's
	// CADRE_HOME), settings, Logger, Permission for live turns. Cwd is where
	// the recording is looked up from; Model, LLM and Agent are the
	// replay's own.
	Options Options
	// Session is the recorded session's id: a main session, or any
	// session of a tree.
	Session string
	// Agent, if set, is the id of a subagent run in Session's tree to
	// replay alone: its own transcript, its prompt as the input.
	Agent string
	// Workspace is where the recorded run worked; default the recorded
	// session's working directory.
	Workspace string
	// InPlace runs the tools in Workspace itself instead of a scratch
	// worktree of it.
	InPlace bool
	// Tools is ReplayToolsAll ("" too) or ReplayToolsReadOnly.
	Tools ReplayTools
	// Model names a live model ("provider:model", as Options.Model) that
	// answers from the first divergence on, or from FromTurn; "" stops at
	// the first divergence.
	Model string
	// FromTurn, when > 0, hands the replayed agent to Model from this turn
	// on (counting from 1): earlier turns are fed from the recording.
	FromTurn int
	// OnEvent, if set, sees the replay's events as they happen.
	OnEvent func(Event)
}

// ReplayDivergenceKind says what diverged.
type ReplayDivergenceKind string

// Kinds of divergence.
const (
	// DivergedToolResult: a tool call returned another result than the
	// recorded one (after normalisation).
	DivergedToolResult ReplayDivergenceKind = replay.KindToolResult
	// DivergedChild: a subagent was started with another agent type or
	// prompt than the recorded one, or one the recording has was not.
	DivergedChild ReplayDivergenceKind = replay.KindChild
	// DivergedTurn: the replay asked for a model turn past the recording's
	// last.
	DivergedTurn ReplayDivergenceKind = replay.KindTurn
	// DivergedFile: a file the recorded run wrote was not changed.
	DivergedFile ReplayDivergenceKind = replay.KindFile
)

// ReplayDivergence is one place where a replay differs from its recording.
type ReplayDivergence struct {
	Kind ReplayDivergenceKind `json:"kind"`
	// Agent is the agent type ("main" or a subagent's), AgentID the
	// recorded session id of its run.
	Agent   string `json:"agent"`
	AgentID string `json:"agent_id,omitempty"`
	// Turn is that agent's model turn, counting from 1, whose tool call
	// diverged; ToolUseID and Tool name the call.
	Turn      int    `json:"turn,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// Path is the file of a DivergedFile.
	Path string `json:"path,omitempty"`
	// Detail says what differs; Recorded and Replayed are the normalised
	// texts compared and Diff a short line diff of them (- recorded,
	// + replayed).
	Detail   string `json:"detail"`
	Recorded string `json:"recorded,omitempty"`
	Replayed string `json:"replayed,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

// String is the divergence in one line.
func (d ReplayDivergence) String() string {
	return replay.Describe(string(d.Kind), d.Agent, d.AgentID, d.Turn, d.Tool, d.ToolUseID, d.Path, d.Detail)
}

// ReplayReport is what a replay found.
type ReplayReport struct {
	// Session is the recorded session, Agent the subagent run replayed
	// alone ("" for the whole session) and AgentType its type.
	Session   string `json:"session"`
	Agent     string `json:"agent,omitempty"`
	AgentType string `json:"agent_type"`
	// ReplaySession is the session the replay ran in (it is recorded like
	// any other).
	ReplaySession string `json:"replay_session"`
	// Workspace is the recorded workspace; Scratch the scratch worktree the
	// tools ran in ("" with InPlace), removed when the replay ends.
	Workspace string      `json:"workspace"`
	Scratch   string      `json:"scratch,omitempty"`
	Tools     ReplayTools `json:"tools"`
	// Model is the live model, "" for none.
	Model string `json:"model,omitempty"`
	// TurnsReplayed counts the model turns fed from the recording (every
	// agent's), TurnsLive those the live model answered.
	TurnsReplayed int `json:"turns_replayed"`
	TurnsLive     int `json:"turns_live"`
	// Diverged is whether anything differed; Divergences lists it in the
	// order found (the first is where the run left the recording), and
	// Stopped says the replay ended there.
	Diverged    bool               `json:"diverged"`
	Stopped     bool               `json:"stopped"`
	Divergences []ReplayDivergence `json:"divergences"`
	// FilesChanged are the files the replay changed in its scratch tree,
	// relative to the workspace.
	FilesChanged []string `json:"files_changed"`
	// Result and IsError are the replayed run's final answer.
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
}

// Replay runs a recorded session again; see ReplayOptions and
// docs/replay.md. Its error is for a replay that could not run (an unknown
// session, a workspace that is not a git repository without InPlace, a
// live model that cannot be built); a replay that ran reports its
// divergences in the report.
func Replay(ctx context.Context, opts ReplayOptions) (ReplayReport, error) {
	switch opts.Tools {
	case "":
		opts.Tools = ReplayToolsAll
	case ReplayToolsAll, ReplayToolsReadOnly:
	default:
		return ReplayReport{}, fmt.Errorf("replay tools %q: want %q or %q", opts.Tools, ReplayToolsAll, ReplayToolsReadOnly)
	}
	if opts.FromTurn < 0 {
		return ReplayReport{}, fmt.Errorf("replay from turn %d: turns count from 1", opts.FromTurn)
	}
	if opts.FromTurn > 0 && opts.Model == "" {
		return ReplayReport{}, errors.New("replay from a turn needs a live model to answer from there (--model)")
	}
	if err := session.ValidateID(opts.Session); err != nil {
		return ReplayReport{}, fmt.Errorf("replay session: %w", err)
	}
	rec, root, err := loadRecording(ctx, opts)
	if err != nil {
		return ReplayReport{}, err
	}
	rep := ReplayReport{
		Session: opts.Session, Agent: opts.Agent, AgentType: rec.Root.Agent, Tools: opts.Tools, Model: opts.Model,
		Divergences: []ReplayDivergence{}, FilesChanged: []string{},
	}
	rep.Workspace = opts.Workspace
	if rep.Workspace == "" {
		rep.Workspace = root.Cwd
	}
	if rep.Workspace, err = filepath.Abs(rep.Workspace); err != nil {
		return rep, fmt.Errorf("replay workspace: %w", err)
	}
	if st, err := os.Stat(rep.Workspace); err != nil || !st.IsDir() {
		return rep, fmt.Errorf("replay workspace %s: not a directory (pass the workspace the run worked in)", rep.Workspace)
	}

	cwd := rep.Workspace
	var tree *worktree.Tree
	if !opts.InPlace {
		if tree, err = replay.ScratchTree(ctx, rep.Workspace); err != nil {
			return rep, err
		}
		defer func() {
			if err := tree.Discard(ctx); err != nil && opts.Options.Logger != nil {
				opts.Options.Logger.Warn("remove the replay's scratch worktree", "path", tree.Path, "err", err)
			}
		}()
		cwd = tree.Rel(rep.Workspace)
		rep.Scratch = cwd
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := replay.NewModel(replay.Config{
		Recording: rec, Normalizer: replay.NewNormalizer(cwd, root.Cwd), FromTurn: opts.FromTurn, Stop: cancel,
	})
	ro := opts.Options
	ro.Cwd, ro.Model, ro.LLM, ro.FallbackModel = cwd, "", nil, ""
	// A subagent replayed alone runs as the main agent of its type, as
	// does a main session recorded with Options.Agent (--agent).
	ro.Agent = ""
	if rec.Root.Agent != "main" {
		ro.Agent = rec.Root.Agent
	}
	if !ro.TrustWorkspace {
		// The scratch tree holds the workspace's files: it is trusted as
		// the workspace is.
		w, err := AssessWorkspace(Options{Cwd: rep.Workspace, Getenv: ro.Getenv, Settings: ro.Settings, SettingSources: ro.SettingSources, Now: ro.Now})
		ro.TrustWorkspace = err == nil && w.Trusted
	}
	ro.Permission = replay.Permission(rec, opts.Options.Permission)
	hooks := &app.Replay{Model: model, Ref: provider.Ref{Provider: "replay", Model: strings.TrimPrefix(model.Name(), "replay:")}}
	if opts.Tools == ReplayToolsReadOnly {
		hooks.Tools = func(ts []tool.Tool) []tool.Tool { return replay.ReadOnly(rec, ts) }
	}
	rt, err := newRuntime(ctx, ro, hooks)
	if err != nil {
		return rep, err
	}
	defer rt.Close()
	if opts.Model != "" {
		live, _, err := rt.app.ResolveModel(strings.TrimSpace(opts.Model))
		if err != nil {
			return rep, fmt.Errorf("replay live model: %w", err)
		}
		model.SetLive(live)
	}

	// Each prompt of the recorded conversation starts a run, as it did:
	// the first a new session, the later ones resume it.
	prompts := rec.Root.Prompts
	if len(prompts) == 0 {
		prompts = []string{rec.Root.Prompt}
	}
	for i, p := range prompts {
		req := Request{Prompt: p}
		if i > 0 {
			if rep.ReplaySession == "" || runCtx.Err() != nil {
				break
			}
			req.Resume = rep.ReplaySession
		}
		for ev, err := range rt.Run(runCtx, req) {
			if err != nil {
				if _, stopped := model.Divergences(); !stopped {
					return rep, err
				}
				break
			}
			if rep.ReplaySession == "" {
				rep.ReplaySession = ev.SessionID
			}
			if ev.Type == EventResult && ev.Result != nil {
				rep.Result, rep.IsError = ev.Result.Result, ev.Result.IsError
			}
			if opts.OnEvent != nil {
				opts.OnEvent(ev)
			}
		}
	}
	divs, stopped := model.Divergences()
	rep.Stopped = stopped
	rep.TurnsReplayed, rep.TurnsLive = model.Counts()
	for _, d := range divs {
		rep.Divergences = append(rep.Divergences, divergenceOf(d))
	}
	if len(divs) == 0 && !stopped {
		for _, d := range model.Short() {
			rep.Divergences = append(rep.Divergences, divergenceOf(d))
		}
	}
	if len(divs) == 0 && !stopped && opts.FromTurn == 0 {
		for _, c := range model.Unstarted() {
			rep.Divergences = append(rep.Divergences, ReplayDivergence{
				Kind: DivergedChild, Agent: c.Agent, AgentID: c.SessionID, Turn: c.SpawnedBy.Turn, ToolUseID: c.SpawnedBy.ToolUseID, Tool: c.SpawnedBy.Tool,
				Detail: "the recorded run started this subagent; the replay did not",
			})
		}
	}
	if tree != nil {
		changed, err := replay.FilesChanged(ctx, tree, cwd)
		if err != nil {
			return rep, err
		}
		rep.FilesChanged = changed
		if len(rep.Divergences) == 0 && !stopped && opts.FromTurn == 0 {
			for _, p := range rec.Writes(root.Cwd, rep.Workspace) {
				if !slices.Contains(changed, p) {
					rep.Divergences = append(rep.Divergences, ReplayDivergence{
						Kind: DivergedFile, Agent: rec.Root.Agent, Path: p,
						Detail: "the recorded run wrote this file; the replay left it as it was",
					})
				}
			}
		}
	}
	rep.Diverged = len(rep.Divergences) > 0
	return rep, nil
}

// loadRecording reads the session tree to replay (opts.Agent's subtree
// when set) and the session the tree's workspace is recorded on.
func loadRecording(ctx context.Context, opts ReplayOptions) (*replay.Recording, session.Info, error) {
	ro := opts.Options
	ro.Model, ro.LLM, ro.Agent = "", nil, ""
	// Reading the store needs a runtime on some directory; the recorded
	// one may be gone, so it is the caller's.
	rt, err := New(ctx, ro)
	if err != nil {
		return nil, session.Info{}, err
	}
	defer rt.Close()
	if err := rt.app.Settled(ctx); err != nil {
		return nil, session.Info{}, err
	}
	rec, top, err := rt.app.LoadRecording(ctx, opts.Session, opts.Agent)
	return rec, top, wrapNotFound(err)
}

func divergenceOf(d replay.Divergence) ReplayDivergence {
	return ReplayDivergence{
		Kind: ReplayDivergenceKind(d.Kind), Agent: d.Agent, AgentID: d.AgentID, Turn: d.Turn, ToolUseID: d.ToolUseID, Tool: d.Tool,
		Detail: d.Detail, Recorded: d.Recorded, Replayed: d.Replayed, Diff: d.Diff,
	}
}
