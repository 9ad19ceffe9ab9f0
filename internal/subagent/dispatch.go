package subagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// Background runs carried between nodes (store.dispatch: any). A node
// does not queue a background run for its own lane: it records the run
// pending and unowned and hands it to a Dispatcher (a job queue every node
// of a shared store works, each with as many workers as its lane has
// places); the first node with a free place, this one included, claims
// the record and runs it (RunDispatched). The launching node
// keeps a stand-in for the run in its parent's group, which counts as
// running until the record ends and then delivers the notification from
// the record, exactly once (MarkNotified), as a local run would. The node
// that ran it records the end and notifies nobody: the parent is not in
// its process.

// Dispatcher hands a background run to whichever node has a free place.
type Dispatcher interface {
	// Dispatch queues job. It returns once the job is stored.
	Dispatch(ctx context.Context, job Job) error
}

// Job is what a node needs, besides the task and session records, to run
// a dispatched child as the launching node would have: the caller's
// settings, which live only in the launching process.
type Job struct {
	TaskID        string          `json:"taskId"`
	ParentAgentID string          `json:"parentAgentId,omitempty"`
	CallerAgent   string          `json:"callerAgent"`
	CallerModel   string          `json:"callerModel,omitempty"` // inherited by a child without a model of its own
	Depth         int             `json:"depth"`                 // the caller's
	Mode          permission.Mode `json:"mode"`                  // the caller's
	Model         string          `json:"model,omitempty"`       // the Agent call's model
	Cwd           string          `json:"cwd"`                   // the child's
	Workspace     string          `json:"workspace,omitempty"`   // the caller's
	RunTimeout    time.Duration   `json:"runTimeout,omitempty"`
	Cleanup       string          `json:"cleanup,omitempty"`
}

// Validate checks a job that came from the shared store before a node acts
// on it.
func (j Job) Validate() error {
	if err := task.ValidateID(j.TaskID); err != nil {
		return fmt.Errorf("dispatched run: %w", err)
	}
	if j.Depth < 0 || j.Depth >= MaxDepth {
		return fmt.Errorf("dispatched run %s: caller depth %d out of range", j.TaskID, j.Depth)
	}
	if j.Cwd == "" {
		return fmt.Errorf("dispatched run %s: no cwd", j.TaskID)
	}
	return nil
}

// ErrNoPlace is returned by RunDispatched when this node's lane is full:
// the job should wait for a node with a free place.
var ErrNoPlace = errors.New("no free place in this node's lane")

// dispatchable reports whether r may run on another node: a plain new
// run. A fork, a continued agent or a fork command's run carries a
// conversation in this process; a worktree is a checkout on this
// machine; a remote agent is already elsewhere.
func (s *Service) dispatchable(r *run) bool {
	return s.cfg.Dispatch != nil && r.req.Fork == nil && r.req.SessionID == "" && r.req.History == nil &&
		r.req.Tools == nil && r.tree == nil && r.def.URL == ""
}

// launchElsewhere records t pending with no owner, hands it to the
// Dispatcher and starts its stand-in. The session's transcript is released
// for the node that will run it.
func (s *Service) launchElsewhere(ctx context.Context, r *run, t *liveTask) error {
	t.elsewhere = true
	if err := s.record(ctx, t, task.StatusPending, r.sess); err != nil {
		s.endSession(ctx, r.sess, session.StatusFailed)
		return err
	}
	if err := r.sess.Release(); err != nil {
		s.log.WarnContext(ctx, "release a dispatched child's transcript", "task_id", t.id, "err", err)
	}
	r.releaseMCP()
	c := r.c
	job := Job{
		TaskID: t.id, ParentAgentID: c.AgentID, CallerAgent: c.Agent, CallerModel: modelName(c.Model),
		Depth: c.Depth, Mode: c.Mode, Model: r.req.Model, Cwd: r.child.cwd, Workspace: c.Workspace,
		RunTimeout: r.req.RunTimeout, Cleanup: r.req.Cleanup,
	}
	if c.Ref.Model != "" {
		job.CallerModel = c.Ref.String()
	}
	if err := s.cfg.Dispatch.Dispatch(context.WithoutCancel(ctx), job); err != nil {
		err = fmt.Errorf("dispatch background run %s: %w", t.id, err)
		// The Agent call reports it: nobody is to be notified of it.
		return errors.Join(err, s.failUnstarted(ctx, t.id, err, true))
	}
	return nil
}

// failUnstarted records that a run which never started failed, with its
// session; notified says its caller was told already (no notification).
func (s *Service) failUnstarted(ctx context.Context, id string, cause error, notified bool) error {
	ctx = context.WithoutCancel(ctx)
	_, err := s.cfg.Tasks.Transition(ctx, id, func(rec *task.Task) (task.Event, error) {
		rec.Error, rec.Finished = cause.Error(), s.cfg.Now()
		rec.Notified = rec.Notified || notified
		return task.EventFail, nil
	})
	if errors.Is(err, task.ErrTransition) {
		err = nil // it ended otherwise already (a stop): that end stands
	}
	if err == nil {
		err = s.cfg.Index.UpdateSession(ctx, id, func(in *session.Info) error {
			in.Status = session.StatusFailed
			return nil
		})
	}
	return err
}

// claimOutput points the record of a dispatched run that starts here at
// this node's output of it.
func (s *Service) claimOutput(ctx context.Context, t *liveTask) error {
	if t.outputFile == "" {
		return nil // the store keeps the transcript: no file to name
	}
	_, err := s.cfg.Tasks.UpdateTask(context.WithoutCancel(ctx), t.id, func(rec *task.Task) error {
		rec.OutputFile = t.outputFile
		return nil
	})
	if err != nil {
		return fmt.Errorf("record task %s: %w", t.id, err)
	}
	// Its start was announced where it was launched.
	return nil
}

// await is the stand-in of a run dispatched to another node: it follows
// the run's record until it ends, asks for a stop when its group stops,
// and then delivers the end as finish does for a local run.
func (s *Service) await(ctx context.Context, t *liveTask) {
	store := context.WithoutCancel(ctx)
	var changed <-chan struct{} // nil without a watcher: the poll alone
	if s.cfg.Watch != nil {
		ch, stop := s.cfg.Watch.WatchTask(store, t.id)
		defer stop()
		changed = ch
	}
	// The poll is the fallback of the watch; thousands of stand-ins
	// polling at the heartbeat's pace would be a load of their own.
	poll := s.cfg.WatchInterval
	if changed != nil {
		poll *= 10
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	stopping := ctx.Done()
	var giveUp <-chan time.Time
	for {
		rec, err := s.cfg.Tasks.GetTask(store, t.id)
		if err == nil && rec.Status.Terminal() {
			s.finishElsewhere(store, t, rec)
			return
		}
		if err == nil && rec.Owner != "" {
			s.follow(t, rec)
		}
		if err != nil {
			s.log.WarnContext(store, "follow a dispatched run", "task_id", t.id, "err", err)
		}
		select {
		case <-stopping:
			stopping = nil
			s.stopElsewhere(store, t.id)
			// A node that died is failed by the orphan sweeper; one that
			// lives stops within a heartbeat. Past this, the stand-in
			// ends so its group can (the record goes on regardless).
			giveUp = time.After(10 * s.cfg.WatchInterval)
		case <-giveUp:
			s.finishElsewhere(store, t, task.Task{ID: t.id, Status: task.StatusKilled,
				Error: "stopped; the node running it had not confirmed the stop when this conversation ended"})
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// shownFigures are what a dispatched run's record shows of it while it
// runs: its tool uses and its newest text (the record's Result is the
// partial text of a run not yet complete).
type shownFigures struct {
	toolUses int
	text     string
}

func (t *liveTask) figures() shownFigures {
	text, _, toolUses, _ := t.snapshot()
	return shownFigures{toolUses: toolUses, text: text}
}

// follow takes a running dispatched run's figures from its record into
// its stand-in, and reports when the tool uses moved.
func (s *Service) follow(t *liveTask, rec task.Task) {
	t.mu.Lock()
	moved := rec.ToolUses != t.toolUses
	t.toolUses, t.text = rec.ToolUses, rec.Result
	t.mu.Unlock()
	if moved {
		s.progress(t)
	}
}

// stopElsewhere asks for a dispatched run to stop (requestStop), for its
// stand-in, whose group stopped.
func (s *Service) stopElsewhere(ctx context.Context, id string) {
	if _, err := s.requestStop(ctx, id); err != nil && !errors.Is(err, errNotRunning) {
		s.log.WarnContext(ctx, "ask a dispatched run to stop", "task_id", id, "err", err)
	}
}

// requestStop stops a run that this process does not run, through its
// record: a dispatched run that no node has claimed yet is killed at once
// (unclaimed); any other is asked to stop, and the process running it
// does. A run that has ended is an error wrapping errNotRunning.
func (s *Service) requestStop(ctx context.Context, id string) (unclaimed bool, err error) {
	now := s.cfg.Now()
	_, err = s.cfg.Tasks.Transition(ctx, id, func(t *task.Task) (task.Event, error) {
		if unclaimed = t.Owner == "" && t.Kind == task.KindLocalAgent; unclaimed {
			return killUnclaimed(t, now), nil
		}
		if t.Status.Terminal() {
			return "", notRunning{id, t.Status}
		}
		t.CancelRequested = true
		return "", nil
	})
	if te := (*task.TransitionError)(nil); errors.As(err, &te) {
		return false, notRunning{id, te.Status}
	}
	return unclaimed, err
}

// errNotRunning is wrapped by requestStop's error for a run that ended.
var errNotRunning = errors.New("not running")

// notRunning is requestStop's error for a run that ended.
type notRunning struct {
	id     string
	status task.Status
}

func (e notRunning) Error() string {
	return fmt.Sprintf("task %s is not running: it %s", e.id, e.status)
}
func (e notRunning) Is(target error) bool { return target == errNotRunning }

// killUnclaimed is the stop of a dispatched run that no node started: what
// its record says of it, and the event.
func killUnclaimed(t *task.Task, now time.Time) task.Event {
	t.Finished, t.Error = now, "stopped before a node started it"
	return task.EventStop
}

// finishElsewhere ends the stand-in of a dispatched run with the end its
// record holds, and delivers it (deliver.go) as finish does.
func (s *Service) finishElsewhere(ctx context.Context, t *liveTask, rec task.Task) {
	out := &loop.Outcome{Result: rec.Result, Usage: rec.Usage, ToolUses: rec.ToolUses}
	if rec.Error != "" {
		out.Subtype, out.Err = loop.SubtypeExecution, errors.New(rec.Error)
	}
	res := &runner.Result{Outcome: out, Cost: rec.CostUSD}
	if !rec.Started.IsZero() && !rec.Finished.IsZero() {
		res.Duration = rec.Finished.Sub(rec.Started)
	}
	t.mu.Lock()
	t.final, t.status, t.endedAt, t.phase = res, rec.Status, s.cfg.Now(), phaseEndedBackground
	t.text, t.toolUses = rec.Result, rec.ToolUses
	t.mu.Unlock()
	s.notice(ctx, t, s.notification(t, rec.Status, rec.Result, rec.Error, rec.ToolUses, res))
	t.group.remove(t.id)
	close(t.done)
}

// RunDispatched runs a child that another node dispatched, on this node,
// and returns when it has ended: the job queue's worker calls it. It
// returns ErrNoPlace at once when this node's lane is full or the service
// is closing, and nil without running anything when the run was claimed,
// stopped or ended already (a job delivered twice runs once).
func (s *Service) RunDispatched(ctx context.Context, job Job) error {
	if err := job.Validate(); err != nil {
		return err
	}
	if s.closed.Load() || !s.lane.TryAcquire() {
		return ErrNoPlace
	}
	held := true
	defer func() {
		if held {
			s.lane.Release()
		}
	}()
	now := s.cfg.Now()
	var stopped bool
	rec, err := s.cfg.Tasks.Transition(ctx, job.TaskID, func(rec *task.Task) (task.Event, error) {
		switch {
		case rec.Owner != "":
			// A second delivery of the job (River rescues a job after
			// an hour): whoever claimed it runs it, this node included.
			return "", errClaimed
		case rec.CancelRequested:
			stopped = true
			return killUnclaimed(rec, now), nil
		}
		rec.Owner, rec.Started, rec.Heartbeat = s.cfg.Owner, now, now
		return task.EventStart, nil
	})
	if errors.Is(err, errClaimed) || errors.Is(err, task.ErrTransition) {
		// Claimed, or ended (stopped before any node started it).
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim dispatched run %s: %w", job.TaskID, err)
	}
	if stopped {
		return nil
	}
	c := Caller{
		RootSessionID: rec.RootSessionID, SessionID: rec.ParentSessionID, Agent: job.CallerAgent,
		Depth: job.Depth, Mode: job.Mode, Cwd: job.Cwd, Workspace: job.Workspace,
		AgentID: job.ParentAgentID, Group: s.orphans,
	}
	if c.Model, c.Ref, err = s.callerModel(job.CallerModel); err != nil {
		return s.notStarted(ctx, job, err)
	}
	req := spawnRequest{
		ToolUseID: rec.ToolUseID, Description: rec.Description, Prompt: rec.Prompt, SubagentType: rec.Agent,
		Model: job.Model, Cwd: job.Cwd, SessionID: rec.ID, Name: rec.Name, Background: true,
		RunTimeout: job.RunTimeout, Cleanup: job.Cleanup, dispatched: true,
	}
	r, err := s.begin(ctx, c, req)
	if err == nil {
		var lt *liveTask
		r.laneHeld, held = true, false
		if lt, err = s.launch(ctx, r, true); err == nil {
			select {
			case <-lt.done:
			case <-ctx.Done():
				// The job's own end (its node shutting down): the run
				// stops, and its record says so.
				lt.cancel(errStopped)
				<-lt.done
			}
			return nil
		}
		r.releaseMCP()
	}
	return s.notStarted(ctx, job, err)
}

// callerModel resolves the caller's model a dispatched child inherits:
// its provider-qualified name, else the bare model name.
func (s *Service) callerModel(name string) (llm.Model, provider.Ref, error) {
	if name == "" {
		return nil, provider.Ref{}, errors.New("the launching node sent no model for the agent that started it")
	}
	m, ref, err := s.cfg.Resolve(name)
	if err != nil {
		if _, bare, ok := strings.Cut(name, ":"); ok {
			if m, ref, berr := s.cfg.Resolve(bare); berr == nil {
				return m, ref, nil
			}
		}
		return nil, provider.Ref{}, fmt.Errorf("this node cannot build the model %q of the agent that started it: %w", name, err)
	}
	return m, ref, nil
}

// notStarted records that a dispatched run cannot start here; no other
// node could do better with the same records: it fails, and its
// launching node tells its parent.
func (s *Service) notStarted(ctx context.Context, job Job, cause error) error {
	if err := s.failUnstarted(ctx, job.TaskID, cause, false); err != nil {
		s.log.WarnContext(ctx, "record that a dispatched run could not start", "task_id", job.TaskID, "err", err)
	}
	return nil
}

// errClaimed aborts the claim of a dispatched run that another node took,
// or that ended.
var errClaimed = errors.New("run claimed or ended already")
