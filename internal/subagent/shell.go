package subagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// Background shells: a Bash call with run_in_background is a task of kind
// local_bash, owned by the agent that made it, exactly as a background
// subagent is owned by the agent that spawned it. It lives in that agent's
// Group (stopped with it: the session's end, Close), is tracked as a
// liveTask so that TaskOutput, TaskStop and the harness' task_output and
// task_cancel reach it, heartbeats like any background run (a stop from
// another process reaches it), and ends through the one delivery
// machinery (deliver.go): one notification, unless a reader took the end.
//
// The command itself is started by the Bash tool (builtin.Shell.Start),
// through the one path every Bash command takes: its process group, its
// sandbox. This file only owns its lifecycle.

// Shells returns the Shells that run c's background Bash commands as its
// tasks.
func (s *Service) Shells(c Caller) builtin.Shells {
	if c.Group == nil {
		c.Group = s.orphans
	}
	return shells{s: s, c: c}
}

// BindShells gives the built-in Bash among tools (if there) c's Shells:
// the tools are then c's own.
func (s *Service) BindShells(c Caller, tools []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if t.Info().Name == "Bash" {
			out[i] = builtin.BindShells(t, s.Shells(c))
		}
	}
	return out
}

type shells struct {
	s *Service
	c Caller
}

// StartShell records sh as a running task of the caller, starts it, and
// watches it to its end in the caller's group.
func (sh shells) StartShell(ctx context.Context, env tool.Env, spec builtin.Shell) (builtin.ShellStarted, error) {
	s, c := sh.s, sh.c
	if err := c.Group.Context().Err(); err != nil {
		return builtin.ShellStarted{}, fmt.Errorf("the session is stopping: %w", context.Cause(c.Group.Context()))
	}
	id := ids.New()
	path := s.outputPath(id)
	out, err := shelltask.OpenOutput(path, s.cfg.ShellMaxOutputBytes)
	if err != nil {
		return builtin.ShellStarted{}, err
	}
	now := s.cfg.Now()
	description := strings.TrimSpace(spec.Description)
	if description == "" {
		description = clip(oneLine(spec.Command), 80)
	}
	t := &liveTask{Live: runs.New(runs.Info{
		ID: id, ParentAgentID: c.AgentID, ParentSessionID: c.SessionID, RootSessionID: c.RootSessionID,
		ToolUseID: env.ToolUseID, AgentCall: env.ToolUseID, AgentType: shelltask.Agent, Kind: task.KindLocalBash,
		Description: description, Prompt: spec.Command, OutputFile: path, Depth: c.Depth,
	}, runs.Options{Background: true, Started: now, Group: c.Group, Filed: true})}
	runCtx, cancel := context.WithCancelCause(c.Group.Context())
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
		ParentSessionID: c.SessionID, RootSessionID: c.RootSessionID, ToolUseID: env.ToolUseID,
		Status: task.StatusRunning, OutputFile: path, Owner: s.cfg.Owner,
		Created: now, Started: now, Heartbeat: now,
	}
	if err := s.cfg.Tasks.CreateTask(context.WithoutCancel(ctx), rec); err != nil {
		// Not recorded, so not told of: it does not run either.
		cancel(errStopped)
		wait()
		out.Close()
		os.Remove(path)
		return builtin.ShellStarted{}, fmt.Errorf("record the background command: %w", err)
	}
	s.track(t)
	c.Group.AddShell(t.Live)
	s.events.Started(t.Info, true)
	c.Group.Go(func() { s.heartbeat(context.WithoutCancel(runCtx), t) })
	c.Group.Go(func() {
		end := wait()
		out.Close()
		s.finishShell(runCtx, t, end)
	})
	return builtin.ShellStarted{ID: id, OutputFile: path, Message: shelltask.Launched(id, path, s.shellOutputCall(id), s.shellStopCall(id))}, nil
}

// shellOutputCall and shellStopCall name the caller's tool calls that read
// and stop task id, in its profile's words.
func (s *Service) shellOutputCall(id string) string {
	if s.profile == nil {
		return ""
	}
	out, _ := s.profile.ShellCalls(id)
	return out
}

func (s *Service) shellStopCall(id string) string {
	if s.profile == nil {
		return ""
	}
	_, stop := s.profile.ShellCalls(id)
	return stop
}

// finishShell records how a background command ended, in the order S-L6
// demands, as finish does for an agent: the terminal status and output
// tail first, then the notification (once), then the run is forgotten.
func (s *Service) finishShell(ctx context.Context, t *liveTask, end builtin.ShellEnd) {
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
	took := s.cfg.Now().Sub(t.Started())
	t.SetFigures(tail, 0)
	t.Finish(&runner.Result{Outcome: &loop.Outcome{Result: tail, Err: runErr}, Duration: took}, status, cause, s.cfg.Now(), tail)

	claiming := s.desk.BeginEndClaim(t)
	won := false
	ev, _ := task.Ends(status) // shellStatus's are terminal
	_, err := s.cfg.Tasks.Transition(ctx, t.ID, func(rec *task.Task) (task.Event, error) {
		rec.Result, rec.Error = tail, errText
		rec.Finished = s.cfg.Now()
		if claiming {
			won, rec.Notified = !rec.Notified, true
		}
		return ev, nil
	})
	var n, first *deliver.Notice
	switch {
	case errors.Is(err, task.ErrTransition):
		if rec, ok := s.endRecordedFirst(ctx, t, err); ok {
			first = notify.ShellNotification(s.events, t.Info, rec, tail, took)
		}
	case err != nil:
		// The end cannot be told before it is recorded (S-L6).
		s.log.WarnContext(ctx, "record a background command's end; its agent is not notified", "task_id", t.ID, "status", status, "err", err)
	default:
		n = notify.ShellNotification(s.events, t.Info, task.Task{Status: status, Error: errText}, tail, took)
	}
	s.desk.Ended(ctx, t, claiming, won, n, first)
	s.untrack(t.ID)
	t.Retire()
}

// RefuseShell says why a message cannot go to task id, when it is a
// background command rather than an agent.
func (s *Service) RefuseShell(ctx context.Context, id string) error {
	kind := task.Kind("")
	if lt := s.live(id); lt != nil {
		kind = lt.TaskKind()
	} else if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		kind = rec.Kind
	}
	if kind == task.KindLocalBash {
		return fmt.Errorf("%s is a background command, not an agent: it cannot take messages (read its output, or stop it)", id)
	}
	return nil
}

// ShellFilter compiles BashOutput's filter ("" for none).
func ShellFilter(expr string) (*regexp.Regexp, error) { return shelltask.Filter(expr) }

// ShellOutputResult is TaskOutput's answer for a background command: its
// status, its exit code once it exited, and its output (the lines filter
// matches, if set), the newest part when it is long.
func (s *Service) ShellOutputResult(rec task.Task, filter *regexp.Regexp) (tool.Result, error) {
	return shelltask.OutputResult(rec, filter, Retrieval(rec.Status)), nil
}

// ShellReport describes a background command in the harness' form: its
// task_id (id, in the harness' spelling), command, status (as the harness
// words it), exit code once it exited, and output (each time it is asked:
// a command's output is read, not delivered).
func ShellReport(rec task.Task, id, status string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task_id: %s\ntask_type: %s\ncommand: %s\nstatus: %s", id, rec.Kind, oneLine(rec.Prompt), status)
	if code, ok := shelltask.ExitCode(rec); ok {
		fmt.Fprintf(&b, "\nexit_code: %d", code)
	} else if rec.Status.Terminal() && rec.Error != "" {
		fmt.Fprintf(&b, "\nerror: %s", oneLine(rec.Error))
	}
	out, err := shelltask.Text(rec.OutputFile, shelltask.ReadLimit, nil)
	if err != nil {
		fmt.Fprintf(&b, "\nerror: cannot read its output: %v", err)
	}
	if out = strings.TrimRight(out, "\n"); out != "" {
		fmt.Fprintf(&b, "\noutput:\n%s", escapeTags(out))
	}
	return b.String()
}
