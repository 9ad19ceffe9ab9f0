package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/subagent/taskout"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// The core's operations on runs and their task records, which every profile
// uses: find, await, send, list, stop, and the tree check that keeps a
// caller to its own session's agents.

const (
	DefaultOutputWait = 30 * time.Second
	MaxOutputWait     = 600 * time.Second
)

// find returns the task with this id: the live run if it is in this
// process, and the record if there is one.
func (s *Service) find(ctx context.Context, id string) (*liveTask, task.Task, error) {
	if err := task.ValidateID(id); err != nil {
		return nil, task.Task{}, fmt.Errorf("invalid task_id: %w", err)
	}
	lt := s.live(id)
	rec, err := s.cfg.Tasks.GetTask(ctx, id)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return nil, task.Task{}, err
	}
	if err != nil && lt == nil {
		return nil, task.Task{}, noTask{id}
	}
	if err != nil {
		// A foreground run has no record; describe it from memory.
		rec = task.Task{ID: id, Kind: lt.TaskKind(), Agent: lt.AgentType, Description: lt.Description, Status: task.StatusRunning, OutputFile: lt.OutputFile}
	}
	return lt, rec, nil
}

// noTask is the error for an id that names no task: a task.ErrNotFound,
// so that a front end can answer "not found" rather than "failed".
type noTask struct{ id string }

func (e noTask) Error() string {
	return fmt.Sprintf("no task %q: task ids are the agentId of a background agent (TaskList lists them)", e.id)
}

func (e noTask) Unwrap() error { return task.ErrNotFound }

// finder finds tasks for the Desk's readers (deliver.Finder).
type finder struct{ s *Service }

// Find is find that also describes a run that just ended in the
// foreground, given it (known): such a run leaves no record. The record's
// agent and name are filled in from the run when it lacks them.
func (f finder) Find(ctx context.Context, id string, known deliver.Run) (deliver.Run, task.Task, error) {
	lt, rec, err := f.s.find(ctx, id)
	if k, ok := known.(*liveTask); err != nil && ok && k.ID == id && k.Over() {
		return k, k.AsTask(), nil
	}
	if err == nil && lt != nil {
		rec.Agent = cmp.Or(rec.Agent, lt.AgentType)
		rec.Name = cmp.Or(rec.Name, lt.Name)
	}
	if lt == nil {
		return nil, rec, err // no run: a nil Run, not a nil *liveTask
	}
	return lt, rec, err
}

// send queues a message for the running agent id, which reads it at its
// next loop boundary, never mid-tool (S-T1). queued is false when the agent
// is not running: the caller resumes it. A run that has stopped taking
// messages is waited for first, so that it can be resumed at once.
func (s *Service) send(ctx context.Context, id, text string) (lt *liveTask, queued bool, err error) {
	if err := s.RefuseShell(ctx, id); err != nil {
		return nil, false, err
	}
	if s.cfg.Mailbox != nil {
		return s.sendMailbox(ctx, queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: id, Message: llm.UserText(text)})
	}
	// The run takes what is queued before it closes to messages (execute),
	// so the message is queued under the same lock.
	lt, _, queued = s.runs.Queue(id, func() {
		s.cfg.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: id, Message: llm.UserText(text)})
	})
	if queued || lt == nil {
		return lt, queued, nil
	}
	select {
	case <-lt.Done():
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
}

// courier reaches agents whose records name another process.
func (s *Service) courier() mailbox.Courier {
	return mailbox.Courier{Tasks: s.cfg.Tasks, Mailbox: s.cfg.Mailbox, Watch: s.cfg.Watch, Interval: s.cfg.WatchInterval, Owner: s.cfg.Owner}
}

// sendMailbox is send through the Mailbox, which reaches the agent in
// whichever process runs it: this one, or the one its record names.
func (s *Service) sendMailbox(ctx context.Context, e queue.Entry) (*liveTask, bool, error) {
	lt := s.live(e.Target)
	if lt == nil {
		queued, err := s.courier().SendElsewhere(ctx, e)
		return nil, queued, err
	}
	queued, err := s.cfg.Mailbox.Push(ctx, e)
	if err != nil || queued {
		return lt, queued, err
	}
	// Its run has closed its inbox: wait for it to end, to resume it.
	select {
	case <-lt.Done():
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
}

// StatusFilter reads a task list's status_filter.
func StatusFilter(name string) ([]task.Status, error) {
	switch name {
	case "", "all":
		return nil, nil
	case "running":
		return []task.Status{task.StatusPending, task.StatusRunning}, nil
	case "completed":
		return []task.Status{task.StatusCompleted}, nil
	case "failed":
		return []task.Status{task.StatusFailed, task.StatusTimeout}, nil
	case "cancelled", "killed":
		return []task.Status{task.StatusKilled}, nil
	}
	return nil, fmt.Errorf("unknown status_filter %q: want running, completed, failed, cancelled or all", name)
}

// List returns the newest tasks (at most 50) of the caller's run tree
// with one of these statuses (any, if none).
func (s *Service) List(ctx context.Context, c Caller, statuses []task.Status) ([]task.Task, error) {
	return s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID, Statuses: statuses, Limit: 50})
}

// Tail is the last n bytes of the log of rec, a run in another process
// (taskout.Files.Tail).
func (f finder) Tail(ctx context.Context, rec task.Task, n int) string {
	return f.s.files().Tail(ctx, rec, n)
}

// Stop stops a running task (S-T3): at once when it runs in this process,
// else by asking the process that runs it through its record.
func (s *Service) Stop(ctx context.Context, id string) (string, error) {
	lt, rec, err := s.find(ctx, id)
	if err != nil {
		return "", err
	}
	if rec.Status.Terminal() {
		return "", fmt.Errorf("task %s is not running: it %s", id, rec.Status)
	}
	if lt == nil {
		unclaimed, err := crossnode.RequestStop(ctx, s.cfg.Tasks, id, s.cfg.Now())
		if err != nil {
			return "", err
		}
		if unclaimed {
			return fmt.Sprintf("Stopped task %s (%s) before any node started it.", id, rec.Description), nil
		}
		return fmt.Sprintf("Asked the process running task %s (%s) to stop it.", id, rec.Description), nil
	}
	lt.Cancel(runs.ErrStopped)
	select {
	case <-lt.Done():
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return fmt.Sprintf("Stopped task %s (%s). Its partial result is kept.", id, rec.Description), nil
}

// InTree refuses an id that names a run of another session's tree: the
// task tools reach only the agents their own session started (any depth).
// An id found nowhere passes, for the callers' own "unknown" errors.
func (s *Service) InTree(ctx context.Context, c Caller, id string) error {
	root := ""
	if lt := s.live(id); lt != nil {
		root = lt.RootSessionID
	} else if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		root = rec.RootSessionID
	} else {
		// A foreground child has no task record: walk its sessions up.
		root = taskout.RootOf(ctx, s.cfg.Index, id)
	}
	if root == "" || root == c.RootSessionID {
		return nil
	}
	return fmt.Errorf("%s belongs to another session's agents; only the agents this session started can be reached", id)
}

// files are the tasks' output files (internal/subagent/taskout).
func (s *Service) files() taskout.Files {
	return taskout.Files{Dir: s.cfg.OutputDir, Tasks: s.cfg.Tasks, Index: s.cfg.Index, Sessions: s.cfg.Sessions}
}

// OwnOutput reports whether path (absolute, symbolic links resolved) is
// the output file of a task of sessionID's run tree (taskout.Files.Own).
// It is the permission policy's ReadableFile.
func (s *Service) OwnOutput(ctx context.Context, sessionID, path string) bool {
	return s.files().Own(ctx, sessionID, path)
}

// Output is rec's output as text (`cadre tasks output`, the SDK's
// TaskOutput; taskout.Files.Output).
func (s *Service) Output(ctx context.Context, rec task.Task) (string, error) {
	return s.files().Output(ctx, rec)
}

// treeRuns are the runs of the caller's tree in progress in this process,
// foreground ones included (they have no task record yet).
func (s *Service) treeRuns(root string) []*liveTask {
	tree := s.runs.Tree(root)
	// A run whose end is recorded is finished, even while its goroutine
	// winds down.
	var out []*liveTask
	for _, t := range tree {
		if !t.Ended() {
			out = append(out, t)
		}
	}
	return out
}
