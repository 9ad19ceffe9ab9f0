package subagent

import (
	"context"
	"log/slog"
	"reflect"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/tool"
)

// The core's calls for the tool profiles (profile.go), beside those named
// where they are written: Spawn (spawn.go), Read and ReadRunning (here; the sequence is internal/subagent/deliver's),
// Stop, List, InTree (tasks.go), Message (message.go), Listed
// (service.go), CrossAllowed (allow.go), Forking (fork.go) and
// AgentResult (agentresult.go). A profile sees a run through RunInfo and
// Running, never its fields or the service's locks.

// The registry's types (internal/subagent/runs), under the names the
// runtime and the profiles have used for them.
type (
	// Group owns the runs of one run tree (runs.Group).
	Group = runs.Group
	// Run is what a front end shows of one run (runs.Run).
	Run = runs.Run
	// RunInfo is what a run is, fixed when it is launched (runs.Info).
	RunInfo = runs.Info
)

// NewGroup returns a group whose runs end when ctx does.
func NewGroup(ctx context.Context) *Group { return runs.NewGroup(ctx) }

// Config is the service's configuration as New completed it (its
// defaults filled in): the stores, queue, bus, clock, hooks and settings a
// profile's tools use.
func (s *Service) Config() Config { return s.cfg }

// Depth is the deepest spawn depth (subagents.maxSpawnDepth, capped at
// MaxDepth): a caller at it spawns nothing.
func (s *Service) Depth() int { return s.depth }

// Logger is where the service's warnings go.
func (s *Service) Logger() *slog.Logger { return s.log }

// SpawnRemoved reports whether c's task rules end in "*": deny, which
// removes every spawn tool.
func (s *Service) SpawnRemoved(c Caller) bool {
	_, removed := s.cfg.Policy.SpawnRemoved(c.TaskRules)
	return removed
}

// MaySpawn reports whether c may be offered a spawn tool: its task rules
// keep it, it is below Depth, and its definition is no leaf (S-D4).
func (s *Service) MaySpawn(c Caller) bool {
	return !s.SpawnRemoved(c) && c.Depth < s.depth && !c.Leaf
}

// Running is a run in this process, as a profile may see it.
type Running struct{ t *liveTask }

// Running is run id if it runs in this process, else nil.
func (s *Service) Running(id string) *Running {
	if t := s.live(id); t != nil {
		return &Running{t}
	}
	return nil
}

// TreeRuns are the runs of the main session root's tree in this process.
func (s *Service) TreeRuns(root string) []RunInfo {
	var out []RunInfo
	for _, t := range s.treeRuns(root) {
		out = append(out, t.Info)
	}
	return out
}

// About is what the run is, fixed when it was launched.
func (r *Running) About() RunInfo { return r.t.Info }

// End reports how the run ended, once its end is decided (ok): its
// result and status.
func (r *Running) End() (res *runner.Result, status task.Status, ok bool) { return r.t.Outcome() }

// OutputTail is the last n bytes of the run's log so far.
func (r *Running) OutputTail(n int) string { return r.t.OutputTail(n) }

// Send gives text to run id: queued when it runs (it reads the message
// after its current step), in this process or, through the mailbox, in
// another; queued is false when it is not running. to is the run the
// message went to when it runs in this process.
func (s *Service) Send(ctx context.Context, id, text string) (to *Running, queued bool, err error) {
	lt, queued, err := s.send(ctx, id, text)
	if lt != nil {
		to = &Running{lt}
	}
	return to, queued, err
}

// Read finds task id — its run in this process, its record, or a
// foreground run's description — for a reader, the one read sequence of
// every reader tool (deliver.Reading).
func (s *Service) Read(ctx context.Context, id string) (*deliver.Reading, error) {
	return s.desk.Read(ctx, id)
}

// ReadRunning is Read of a run the reader holds already (agent_send
// waiting for the agent its message went to), not yet known to have
// ended.
func (s *Service) ReadRunning(r *Running) *deliver.Reading {
	lt := r.t
	return s.desk.ReadRunning(lt, task.Task{ID: lt.ID, Kind: lt.TaskKind(), Status: task.StatusRunning})
}

// Def is the definition the child ran.
func (o *Outcome) Def() agent.Definition { return o.def }

// SessionID is the child's session id, which is its agent and task id.
func (o *Outcome) SessionID() string { return o.sessionID }

// Result is a finished child's result; nil when it was launched.
func (o *Outcome) Result() *runner.Result { return o.res }

// Warnings are what the spawn noted for the model (a model that could
// not be used, a server that did not start).
func (o *Outcome) Warnings() []string { return o.warnings }

// Launched reports that the child goes on in the background.
func (o *Outcome) Launched() bool { return o.launched }

// Run is the child's run.
func (o *Outcome) Run() *Running { return &Running{o.task} }

// TimedOut reports why the run ended past its time limit, if it did: the
// limit that elapsed, which its result's error does not name.
func (o *Outcome) TimedOut() (error, bool) { return o.task.timedOut() }

// Worktree is what became of the run's worktree (nil without one).
func (o *Outcome) Worktree() *worktree.Outcome { return o.task.worktree() }

// CallerTool is tool.New(meta, run) for a tool that every caller gets a
// variant of (its own run, sometimes its own description): the input
// schema is inferred, encoded and resolved once per service, by the first
// variant of that name, and shared by the rest — without it each child
// paid for reflection and encoding of every task tool's schema.
func CallerTool[In any](s *Service, meta tool.Info, run func(context.Context, tool.Env, In) (tool.Result, error)) *tool.Typed[In] {
	key := struct {
		name string
		in   reflect.Type
	}{meta.Name, reflect.TypeFor[In]()}
	p, _ := s.toolProtos.LoadOrStore(key, tool.New[In](tool.Info{Name: meta.Name, InputSchema: meta.InputSchema}, nil))
	return p.(*tool.Typed[In]).With(meta, run)
}

// Current is c with its live settings (Live) applied: its permission mode
// and model as they are now.
func (c Caller) Current() Caller { return c.current() }
