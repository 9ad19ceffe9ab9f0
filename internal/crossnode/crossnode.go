package crossnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

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
	// Teammate is the run's name on its lead's team: the node that runs
	// it gives it the team's tools and list.
	Teammate string `json:"teammate,omitempty"`
}

// Validate checks a job that came from the shared store before a node acts
// on it; a caller at maxDepth or deeper could not have spawned.
func (j Job) Validate(maxDepth int) error {
	if err := task.ValidateID(j.TaskID); err != nil {
		return fmt.Errorf("dispatched run: %w", err)
	}
	if j.Depth < 0 || j.Depth >= maxDepth {
		return fmt.Errorf("dispatched run %s: caller depth %d out of range", j.TaskID, j.Depth)
	}
	if j.Cwd == "" {
		return fmt.Errorf("dispatched run %s: no cwd", j.TaskID)
	}
	if j.Teammate != "" && agent.ValidateName(j.Teammate) != nil {
		return fmt.Errorf("dispatched run %s: teammate name: %w", j.TaskID, agent.ValidateName(j.Teammate))
	}
	return nil
}

// ErrNoPlace is returned by a node asked to run a job when its lane is
// full: the job should wait for a node with a free place.
var ErrNoPlace = errors.New("no free place in this node's lane")

// Records is what this package needs of the task store.
type Records interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error)
}

// errClaimed aborts the claim of a dispatched run that another node took,
// or that ended.
var errClaimed = errors.New("run claimed or ended already")

// Claim takes dispatched run id for owner, starting it now. It returns the
// record as claimed and true when owner is to run it; false, with no
// error, when there is nothing to run: another node claimed it (a job
// delivered twice runs once), it ended, or a stop was asked for before any
// node started it (Claim records the kill).
func Claim(ctx context.Context, tasks Records, id, owner string, now time.Time) (task.Task, bool, error) {
	var stopped bool
	rec, err := tasks.Transition(ctx, id, func(rec *task.Task) (task.Event, error) {
		switch {
		case rec.Owner != "":
			// A second delivery of the job (River rescues a job after
			// an hour): whoever claimed it runs it, this node included.
			return "", errClaimed
		case rec.CancelRequested:
			stopped = true
			return killUnclaimed(rec, now), nil
		}
		rec.Owner, rec.Started, rec.Heartbeat = owner, now, now
		return task.EventStart, nil
	})
	if errors.Is(err, errClaimed) || errors.Is(err, task.ErrTransition) {
		// Claimed, or ended (stopped before any node started it).
		return task.Task{}, false, nil
	}
	if err != nil {
		return task.Task{}, false, fmt.Errorf("claim dispatched run %s: %w", id, err)
	}
	return rec, !stopped, nil
}

// killUnclaimed is the stop of a dispatched run that no node started: what
// its record says of it, and the event.
func killUnclaimed(t *task.Task, now time.Time) task.Event {
	t.Finished, t.Error = now, "stopped before a node started it"
	return task.EventStop
}

// RequestStop stops a run that this process does not run, through its
// record: a dispatched run that no node has claimed yet is killed at once
// (unclaimed); any other is asked to stop, and the process running it
// does. A run that has ended is an error wrapping ErrNotRunning.
func RequestStop(ctx context.Context, tasks Records, id string, now time.Time) (unclaimed bool, err error) {
	_, err = tasks.Transition(ctx, id, func(t *task.Task) (task.Event, error) {
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

// ErrNotRunning is wrapped by RequestStop's error for a run that ended.
var ErrNotRunning = errors.New("not running")

// notRunning is RequestStop's error for a run that ended.
type notRunning struct {
	id     string
	status task.Status
}

func (e notRunning) Error() string {
	return fmt.Sprintf("task %s is not running: it %s", e.id, e.status)
}
func (e notRunning) Is(target error) bool { return target == ErrNotRunning }

// Sessions is what FailUnstarted needs of the session index.
type Sessions interface {
	UpdateSession(ctx context.Context, id string, fn func(*session.Info) error) error
}

// FailUnstarted records that a run which never started failed for cause,
// with its session; notified says its caller was told already (no
// notification is due). A run that ended otherwise already (a stop) keeps
// that end.
func FailUnstarted(ctx context.Context, tasks Records, sessions Sessions, id string, cause error, notified bool, now time.Time) error {
	ctx = context.WithoutCancel(ctx)
	_, err := tasks.Transition(ctx, id, func(rec *task.Task) (task.Event, error) {
		rec.Error, rec.Finished = cause.Error(), now
		rec.Notified = rec.Notified || notified
		return task.EventFail, nil
	})
	if errors.Is(err, task.ErrTransition) {
		err = nil // it ended otherwise already (a stop): that end stands
	}
	if err == nil {
		err = sessions.UpdateSession(ctx, id, func(in *session.Info) error {
			in.Status = session.StatusFailed
			return nil
		})
	}
	return err
}

// Watcher tells at once that a task's record changed, through any process
// (mailbox.TaskWatcher).
type Watcher interface {
	WatchTask(ctx context.Context, taskID string) (changed <-chan struct{}, stop func())
}

// Follower follows the records of runs dispatched to other nodes, for
// their stand-ins.
type Follower struct {
	Tasks Records
	// Watch, if set, hears changes at once; the poll at ten times
	// Interval is then only its fallback. Nil: the poll at Interval.
	Watch    Watcher
	Interval time.Duration
	Now      func() time.Time
	Log      *slog.Logger
}

// Follow follows run id's record until it ends and returns the ended
// record, telling running of each reading while a node runs it. When ctx
// ends (the stand-in's group stops) it asks for the run to stop, and gives
// up after ten Intervals: it then returns a killed record that says the
// stop was not confirmed (the record itself goes on regardless).
func (f Follower) Follow(ctx context.Context, id string, running func(task.Task)) task.Task {
	store := context.WithoutCancel(ctx)
	var changed <-chan struct{} // nil without a watcher: the poll alone
	if f.Watch != nil {
		ch, stop := f.Watch.WatchTask(store, id)
		defer stop()
		changed = ch
	}
	// The poll is the fallback of the watch; thousands of stand-ins
	// polling at the heartbeat's pace would be a load of their own.
	poll := f.Interval
	if changed != nil {
		poll *= 10
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	stopping := ctx.Done()
	var giveUp <-chan time.Time
	for {
		rec, err := f.Tasks.GetTask(store, id)
		if err == nil && rec.Status.Terminal() {
			return rec
		}
		if err == nil && rec.Owner != "" {
			running(rec)
		}
		if err != nil {
			f.Log.WarnContext(store, "follow a dispatched run", "task_id", id, "err", err)
		}
		select {
		case <-stopping:
			stopping = nil
			if _, err := RequestStop(store, f.Tasks, id, f.Now()); err != nil && !errors.Is(err, ErrNotRunning) {
				f.Log.WarnContext(store, "ask a dispatched run to stop", "task_id", id, "err", err)
			}
			// A node that died is failed by the orphan sweeper; one that
			// lives stops within a heartbeat. Past this, the stand-in
			// ends so its group can (the record goes on regardless).
			giveUp = time.After(10 * f.Interval)
		case <-giveUp:
			return task.Task{ID: id, Status: task.StatusKilled,
				Error: "stopped; the node running it had not confirmed the stop when this conversation ended"}
		case <-changed:
		case <-tick.C:
		}
	}
}

// CallerModel resolves the model of the agent that started a dispatched
// run, which a child without a model of its own inherits: its
// provider-qualified name, else the bare model name.
func CallerModel(resolve func(name string) (llm.Model, provider.Ref, error), name string) (llm.Model, provider.Ref, error) {
	if name == "" {
		return nil, provider.Ref{}, errors.New("the launching node sent no model for the agent that started it")
	}
	m, ref, err := resolve(name)
	if err != nil {
		if _, bare, ok := strings.Cut(name, ":"); ok {
			if m, ref, berr := resolve(bare); berr == nil {
				return m, ref, nil
			}
		}
		return nil, provider.Ref{}, fmt.Errorf("this node cannot build the model %q of the agent that started it: %w", name, err)
	}
	return m, ref, nil
}

// errTaken aborts the take-over of a record that changed since it was
// listed: someone else took it, or it ended.
var errTaken = errors.New("task changed since it was listed")

// Takeover claims for owner the record of a run, listed as listed, whose
// process has ended (a remote run whose task goes on on its server, S-W2):
// it returns the record as taken and true, or false with no error when the
// record changed since it was listed (its owner or heartbeat moved, or it
// ended): someone else's then.
func Takeover(ctx context.Context, tasks Records, listed task.Task, owner string, now time.Time) (task.Task, bool, error) {
	rec, err := tasks.Transition(ctx, listed.ID, func(t *task.Task) (task.Event, error) {
		if t.Owner != listed.Owner || !t.Heartbeat.Equal(listed.Heartbeat) {
			return "", errTaken
		}
		t.Owner, t.Heartbeat = owner, now
		if t.Started.IsZero() {
			t.Started = now
		}
		return task.EventReattach, nil
	})
	// One that ended since (ErrTransition) is someone else's too.
	if errors.Is(err, errTaken) || errors.Is(err, task.ErrTransition) {
		return task.Task{}, false, nil
	}
	if err != nil {
		return task.Task{}, false, err
	}
	return rec, true, nil
}
