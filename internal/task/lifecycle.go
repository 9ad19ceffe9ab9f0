package task

import (
	"errors"
	"fmt"
	"slices"
)

// The task state machine. A task's status changes only by an event, and
// Lifecycle is the whole table: which statuses each event may happen to,
// the status it leads to, who causes it and what it announces. Stores
// enforce it: UpdateTask refuses a status change, and Transition applies
// an event with Apply, inside the same atomic update that reads the
// record, so of two events racing on one task the second sees the first's
// status and is refused (two ends of one run: one wins).
//
// A record is created (CreateTask) in any status: a run is recorded
// pending or running when it is launched, and tests and imports create
// finished ones. Creation is not an event.

// Event is something that happens to a task and moves it to another
// status. Its value is the verb an error about it uses ("cannot stop a
// completed task").
type Event string

const (
	// EventStart: a pending run starts running.
	EventStart Event = "start"
	// EventReattach: a later process takes over an unfinished remote run
	// whose executor ended, and follows its remote task again.
	EventReattach Event = "reattach"
	// EventResume: a continued agent's record is rewritten for its new
	// run, which starts at once.
	EventResume Event = "resume"
	// EventRequeue: a continued agent's record is rewritten for its new
	// run, which waits for a place in the lane.
	EventRequeue Event = "requeue"
	// EventComplete: the run finished normally.
	EventComplete Event = "complete"
	// EventFail: the run ended by an error, or could not start.
	EventFail Event = "fail"
	// EventStop: the run was stopped (TaskStop, a stop cascade, the end
	// of its session).
	EventStop Event = "stop"
	// EventTimeOut: the run was stopped by its time limit.
	EventTimeOut Event = "time out"
	// EventOrphan: the process or node executing the run is gone.
	EventOrphan Event = "orphan"
)

// Actor is who may cause an event.
type Actor string

const (
	// ActorOwner is the process executing the run (Task.Owner), or the
	// node that claims a dispatched run to execute it.
	ActorOwner Actor = "owner"
	// ActorLauncher is the process that launched the run: it records a
	// continued agent's new run, and fails a run it could not hand over.
	ActorLauncher Actor = "launcher"
	// ActorUser is whoever stops a run through its record from another
	// process: TaskStop, `cadre tasks stop`, a stand-in whose
	// conversation ended.
	ActorUser Actor = "user"
	// ActorSweep is the recovery that judges executors gone: Recover at
	// start-up, the cluster's sweep, a later process reattaching.
	ActorSweep Actor = "sweep"
)

// Emits names what an event announces beyond the record itself.
type Emits string

const (
	// EmitsNothing: the record is the whole effect (task_started was
	// published when the run was launched).
	EmitsNothing Emits = ""
	// EmitsStarted: a task_started line for the run's new start.
	EmitsStarted Emits = "task_started"
	// EmitsNotification: the parent is told, exactly once (the
	// notified flag, MarkNotified): a task_notification queued for its
	// agent and published, unless a reader took the end first. A stand-in
	// that follows the record delivers the end of a run it does not
	// execute.
	EmitsNotification Emits = "task_notification"
)

// Transition is one row of Lifecycle.
type Transition struct {
	Event Event
	From  []Status // the statuses the event may happen to
	To    Status
	By    []Actor
	Emits Emits
	// Why explains the row, for readers of the table.
	Why string
}

var (
	unfinished = []Status{StatusPending, StatusRunning}
	anyStatus  = []Status{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusKilled, StatusTimeout}
)

// lifecycle is the table; Lifecycle returns a copy.
var lifecycle = []Transition{
	{EventStart, []Status{StatusPending}, StatusRunning, []Actor{ActorOwner}, EmitsNothing,
		"a run waiting for a lane place got one; a node claimed a dispatched run"},
	{EventReattach, unfinished, StatusRunning, []Actor{ActorSweep}, EmitsNothing,
		"a remote run outlives its process: a later one follows its remote task"},
	{EventResume, anyStatus, StatusRunning, []Actor{ActorLauncher}, EmitsStarted,
		"an agent continued by SendMessage keeps its id: its record is rewritten, notified cleared; " +
			"an unfinished one too, whose end was never recorded (its process died before a sweep judged it)"},
	{EventRequeue, anyStatus, StatusPending, []Actor{ActorLauncher}, EmitsStarted,
		"as resume, for a continued agent that waits for a lane place"},
	{EventComplete, unfinished, StatusCompleted, []Actor{ActorOwner}, EmitsNotification,
		"the child's loop ended without an error; from pending too when the write recording its start failed"},
	{EventFail, unfinished, StatusFailed, []Actor{ActorOwner, ActorLauncher}, EmitsNotification,
		"the run ended by an error, or could not be started or handed to a node"},
	{EventStop, unfinished, StatusKilled, []Actor{ActorOwner, ActorUser}, EmitsNotification,
		"TaskStop, a stop cascade or the session's end; a dispatched run stopped before a node claimed it"},
	{EventTimeOut, unfinished, StatusTimeout, []Actor{ActorOwner}, EmitsNotification,
		"runTimeoutSeconds elapsed"},
	{EventOrphan, unfinished, StatusFailed, []Actor{ActorSweep}, EmitsNotification,
		"its executor is gone (owner lock free, node silent or left); the error names it"},
}

// Lifecycle is the task state machine, one row per event.
func Lifecycle() []Transition {
	out := make([]Transition, len(lifecycle))
	for i, tr := range lifecycle {
		tr.From, tr.By = slices.Clone(tr.From), slices.Clone(tr.By)
		out[i] = tr
	}
	return out
}

func rowOf(ev Event) (Transition, bool) {
	for _, tr := range lifecycle {
		if tr.Event == ev {
			return tr, true
		}
	}
	return Transition{}, false
}

// Ends returns the event that ends a run with the terminal status st:
// complete, fail, stop or time out.
func Ends(st Status) (Event, error) {
	switch st {
	case StatusCompleted:
		return EventComplete, nil
	case StatusFailed:
		return EventFail, nil
	case StatusKilled:
		return EventStop, nil
	case StatusTimeout:
		return EventTimeOut, nil
	}
	return "", fmt.Errorf("no event ends a run %s: %q is not a terminal status", st, st)
}

// ErrTransition is wrapped by the error of an event that cannot happen to
// a task in its status, and of an update that changes a status without
// one.
var ErrTransition = errors.New("illegal task status change")

// TransitionError is an event that cannot happen to a task in its status.
type TransitionError struct {
	ID     string
	Event  Event
	Status Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("task %s: cannot %s a %s task", e.ID, e.Event, e.Status)
}

func (e *TransitionError) Is(target error) bool { return target == ErrTransition }

// Apply returns t after ev: with the status ev leads to, or an error
// (wrapping ErrTransition) naming the task, the event and its status when
// ev cannot happen to it. Apply changes nothing else: what the event
// carries (result, error, times) the caller records beside it.
func Apply(t Task, ev Event) (Task, error) {
	tr, ok := rowOf(ev)
	if !ok {
		return t, fmt.Errorf("task %s: unknown event %q", t.ID, ev)
	}
	if !slices.Contains(tr.From, t.Status) {
		return t, &TransitionError{ID: t.ID, Event: ev, Status: t.Status}
	}
	t.Status = tr.To
	return t, nil
}

// Stores use the two helpers below, so that every store enforces the
// table the same way; each runs inside the store's atomic update, on the
// record as stored.

// Fields returns UpdateTask's fn as a store runs it: fn may change any
// field but the status (an invalid status is left for Validate to name).
func Fields(fn func(*Task) error) func(*Task) error {
	return func(t *Task) error {
		before := t.Status
		if err := fn(t); err != nil {
			return err
		}
		if t.Status != before && t.Status.Valid() {
			return fmt.Errorf("task %s: an update cannot change its status (%s to %s); a status change is an event (Transition): %w",
				t.ID, before, t.Status, ErrTransition)
		}
		return nil
	}
}

// Step returns Transition's fn as a store runs it: fn sees the record as
// stored, changes what the event carries and names the event; the event
// is then applied to the record as stored (Apply). fn may not set the
// status itself. An fn that names no event ("") found that the record
// calls for no status change: its update is stored as UpdateTask's.
func Step(fn func(*Task) (Event, error)) func(*Task) error {
	return func(t *Task) error {
		before := *t
		ev, err := fn(t)
		if err != nil {
			return err
		}
		if t.Status != before.Status {
			return fmt.Errorf("task %s: a transition's fn set the status to %s; it names the event instead: %w", t.ID, t.Status, ErrTransition)
		}
		if ev == "" {
			return nil
		}
		next, err := Apply(before, ev)
		if err != nil {
			return err
		}
		t.Status = next.Status
		return nil
	}
}
