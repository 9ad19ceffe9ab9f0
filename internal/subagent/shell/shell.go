package shell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/heartbeat"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// Tracker makes a run known to the task tools of the service that runs
// it, until untrack, and gives it back as its delivery sees it.
type Tracker interface {
	Track(t *runs.Live) (run deliver.Run, untrack func())
}

// Runner starts the background commands of one service's agents.
type Runner struct {
	Tasks   task.Store
	Desk    *deliver.Desk
	Events  notify.Publisher
	Beater  heartbeat.Beater // a command's heartbeat, as every background run's
	Tracker Tracker
	Now     func() time.Time
	// Owner is this process's owner id, written on the records.
	Owner string
	// OutputPath is the output file of task id.
	OutputPath func(id string) string
	// MaxOutputBytes bounds a command's output file; the oldest output
	// goes first.
	MaxOutputBytes int64
	// Calls name, in the profile's words, the calls that read and stop
	// task id (nil: none named).
	Calls func(id string) (output, stop string)
	Log   *slog.Logger
}

// Owner is the agent whose background commands they are.
type Owner struct {
	// Group owns the commands: they stop with it.
	Group *runs.Group
	// AgentID is the target of their notifications.
	AgentID                  string
	SessionID, RootSessionID string
	Depth                    int
}

// For returns the Shells that run o's background Bash commands as its
// tasks.
func (r *Runner) For(o Owner) builtin.Shells { return shells{r: r, o: o} }

// Bind gives the built-in Bash among tools (if there) o's Shells: the
// tools are then o's own.
func (r *Runner) Bind(o Owner, tools []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if t.Info().Name == "Bash" {
			out[i] = builtin.BindShells(t, r.For(o))
		}
	}
	return out
}

type shells struct {
	r *Runner
	o Owner
}

// StartShell records sh as a running task of the owner, starts it, and
// watches it to its end in the owner's group.
func (sh shells) StartShell(ctx context.Context, env tool.Env, spec builtin.Shell) (builtin.ShellStarted, error) {
	r, o := sh.r, sh.o
	if err := o.Group.Context().Err(); err != nil {
		return builtin.ShellStarted{}, fmt.Errorf("the session is stopping: %w", context.Cause(o.Group.Context()))
	}
	id := ids.New()
	path := r.OutputPath(id)
	out, err := shelltask.OpenOutput(path, r.MaxOutputBytes)
	if err != nil {
		return builtin.ShellStarted{}, err
	}
	now := r.Now()
	description := strings.TrimSpace(spec.Description)
	if description == "" {
		description = prompt.Clip(prompt.OneLine(spec.Command), 80)
	}
	t := runs.New(runs.Info{
		ID: id, ParentAgentID: o.AgentID, ParentSessionID: o.SessionID, RootSessionID: o.RootSessionID,
		ToolUseID: env.ToolUseID, AgentCall: env.ToolUseID, AgentType: shelltask.Agent, Kind: task.KindLocalBash,
		Description: description, Prompt: spec.Command, OutputFile: path, Depth: o.Depth,
	}, runs.Options{Background: true, Started: now, Group: o.Group, Filed: true})
	runCtx, cancel := context.WithCancelCause(o.Group.Context())
	t.SetCancel(cancel)
	wait, err := spec.Start(runCtx, out)
	if err != nil {
		cancel(nil)
		out.Close()
		os.Remove(path)
		return builtin.ShellStarted{}, err
	}
	rec := task.Task{
		ID: id, Kind: task.KindLocalBash, Agent: shelltask.Agent, Description: description, Prompt: spec.Command,
		ParentSessionID: o.SessionID, RootSessionID: o.RootSessionID, ToolUseID: env.ToolUseID,
		Status: task.StatusRunning, OutputFile: path, Owner: r.Owner,
		Created: now, Started: now, Heartbeat: now,
	}
	if err := r.Tasks.CreateTask(context.WithoutCancel(ctx), rec); err != nil {
		// Not recorded, so not told of: it does not run either.
		cancel(runs.ErrStopped)
		wait()
		out.Close()
		os.Remove(path)
		return builtin.ShellStarted{}, fmt.Errorf("record the background command: %w", err)
	}
	run, untrack := r.Tracker.Track(t)
	o.Group.AddShell(t)
	r.Events.Started(t.Info, true)
	o.Group.Go(func() {
		r.Beater.Beat(context.WithoutCancel(runCtx), heartbeat.Run{ID: id, Done: t.Done(), Stop: func() { t.Cancel(runs.ErrStopped) }})
	})
	o.Group.Go(func() {
		end := wait()
		out.Close()
		r.finish(runCtx, t, run, end)
		untrack()
		t.Retire()
	})
	output, stop := "", ""
	if r.Calls != nil {
		output, stop = r.Calls(id)
	}
	return builtin.ShellStarted{ID: id, OutputFile: path, Message: shelltask.Launched(id, path, output, stop)}, nil
}

// finish records how a background command ended, in the order S-L6
// demands, as the core's finish does for an agent: the terminal status and
// output tail first, then the notification (once); then the caller
// forgets the run.
func (r *Runner) finish(ctx context.Context, t *runs.Live, run deliver.Run, end builtin.ShellEnd) {
	cause := context.Cause(ctx)
	ctx = context.WithoutCancel(ctx)
	tail := strings.TrimRight(shelltask.RawTail(t.OutputFile, shelltask.Tail), "\n")
	if end.Explain != nil {
		if why := end.Explain(tail); why != "" {
			tail = strings.TrimSpace(tail + "\n\n" + why)
		}
	}
	status, errText := shelltask.Status(end, cause)
	var runErr error
	if errText != "" {
		runErr = errors.New(errText)
	}
	took := r.Now().Sub(t.Started())
	t.SetFigures(tail, 0)
	t.Finish(&runner.Result{Outcome: &loop.Outcome{Result: tail, Err: runErr}, Duration: took}, status, cause, r.Now(), tail)

	claiming := r.Desk.BeginEndClaim(run)
	won := false
	ev, _ := task.Ends(status) // shelltask.Status's are terminal
	_, err := r.Tasks.Transition(ctx, t.ID, func(rec *task.Task) (task.Event, error) {
		rec.Result, rec.Error = tail, errText
		rec.Finished = r.Now()
		if claiming {
			won, rec.Notified = !rec.Notified, true
		}
		return ev, nil
	})
	var n, first *deliver.Notice
	switch {
	case errors.Is(err, task.ErrTransition):
		if rec, ok := r.Desk.RecordedFirst(ctx, t.ID, err); ok {
			first = notify.ShellNotification(r.Events, t.Info, rec, tail, took)
		}
	case err != nil:
		// The end cannot be told before it is recorded (S-L6).
		r.Log.WarnContext(ctx, "record a background command's end; its agent is not notified", "task_id", t.ID, "status", status, "err", err)
	default:
		n = notify.ShellNotification(r.Events, t.Info, task.Task{Status: status, Error: errText}, tail, took)
	}
	r.Desk.Ended(ctx, run, claiming, won, n, first)
}
