package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/ids"

	"github.com/cadre-dev/cadre/record"
)

// Status is where a task is in its lifecycle: pending → running → one of
// the terminal statuses. Events move it (lifecycle.go). It is the SDK's
// record.TaskStatus, the same type (Terminal, Valid).
type Status = record.TaskStatus

const (
	StatusPending   = record.TaskPending   // registered, waiting for a slot in its lane
	StatusRunning   = record.TaskRunning   // executing
	StatusCompleted = record.TaskCompleted // finished normally
	StatusFailed    = record.TaskFailed    // ended by an error, or its process died
	StatusKilled    = record.TaskKilled    // stopped by TaskStop or a stop cascade
	StatusTimeout   = record.TaskTimeout   // stopped by runTimeoutSeconds
)

// Kind is what a task runs: the SDK's record.TaskKind, the same type.
type Kind = record.TaskKind

const (
	KindLocalAgent  = record.TaskLocalAgent  // a background subagent run in this process
	KindLocalBash   = record.TaskLocalBash   // a background shell command
	KindRemoteAgent = record.TaskRemoteAgent // a run on a remote agent (A2A); not tied to a local process
)

// Task is the durable record of one background unit of work: the SDK's
// record.Task, the same type (stores leave its Model and NumTurns empty;
// the runtime adds them from the task's session where it shows one).
type Task = record.Task

// Validate checks what every store requires of a record: a valid id, kind
// and status. Stores call it on create and after every update.
func Validate(t Task) error {
	if err := ValidateID(t.ID); err != nil {
		return err
	}
	if !t.Kind.Valid() {
		return fmt.Errorf("task %q: unknown kind %q (want local_agent, local_bash or remote_agent)", t.ID, t.Kind)
	}
	if !t.Status.Valid() {
		return fmt.Errorf("task %q: unknown status %q (want pending, running, completed, failed, killed or timeout)", t.ID, t.Status)
	}
	return nil
}

// Filter selects tasks in ListTasks. Empty fields match everything; the
// zero Filter selects all tasks.
type Filter struct {
	RootSessionID   string
	ParentSessionID string
	Owner           string
	// Statuses, when not empty, keeps tasks whose status is one of these.
	Statuses []Status
	// FinishedBefore, when set, keeps tasks that finished before it.
	FinishedBefore time.Time
	// Unarchived keeps tasks whose child session is not archived yet.
	Unarchived bool
	// Limit, when > 0, caps the number of tasks returned.
	Limit int
}

// Validate checks that every status in f is a defined one: a misspelt
// status would otherwise silently match nothing.
func (f Filter) Validate() error {
	for _, s := range f.Statuses {
		if !s.Valid() {
			return fmt.Errorf("filter: unknown status %q", s)
		}
	}
	return nil
}

// Store holds task records. It is declared here, where it is consumed, and
// implemented by Mem and by the store packages (SQLite, PostgreSQL);
// every implementation passes the conformance suite in package tasktest.
//
// Implementations must be safe for concurrent use, by several goroutines and
// (for the database stores) by several processes sharing the store, and must
// honour ctx.
type Store interface {
	// CreateTask records a new task. The task must pass Validate; an id
	// already present is an error.
	CreateTask(ctx context.Context, t Task) error
	// GetTask returns the record of id, or an error wrapping ErrNotFound
	// that names the id.
	GetTask(ctx context.Context, id string) (Task, error)
	// UpdateTask reads the record of id, passes it to fn and stores what fn
	// left, atomically: concurrent updates (from this process or another
	// sharing the store) never lose one another's changes. If fn returns an
	// error nothing is stored and an error wrapping it is returned. The
	// result must pass Validate and keep the id. It returns the record as
	// stored. fn must be quick and must not call back into the Store (it may
	// run while the store is locked). fn may run more than once (a store may
	// retry the update); what its last run left is stored.
	//
	// fn may not change the status: that is an event (Transition), and an
	// update that does is refused with an error wrapping ErrTransition
	// (Fields).
	UpdateTask(ctx context.Context, id string, fn func(*Task) error) (Task, error)
	// Transition is UpdateTask for a status change (lifecycle.go): fn sees
	// the record as stored, changes what the event carries (result, error,
	// times, ...) and returns the event, which the store then applies to
	// the record as stored, all in one atomic update (Step). An event that
	// cannot happen to the task in its status stores nothing and returns
	// an error wrapping ErrTransition that names the task, the event and
	// the status: of two events racing on one task, the second finds the
	// first's status. fn returns no event ("") when the record it found
	// calls for none: the update is then UpdateTask's.
	Transition(ctx context.Context, id string, fn func(*Task) (Event, error)) (Task, error)
	// ListTasks returns the tasks matching f, newest Created first (ties:
	// greater ID first). A filter with an unknown status is an error.
	ListTasks(ctx context.Context, f Filter) ([]Task, error)
	// MarkNotified flips Notified from false to true and reports whether
	// this call did it: of all callers, in every process sharing the store,
	// exactly one ever gets true (S-N1). Only a task in a terminal status
	// can be marked; otherwise the error wraps ErrNotTerminal, because the
	// status must be recorded before anyone is told of it (S-L6).
	MarkNotified(ctx context.Context, id string) (bool, error)
}

// ErrNotFound is wrapped by Store errors about a task that does not exist.
var ErrNotFound = errors.New("task not found")

// ErrNotTerminal is wrapped by MarkNotified's error for a task that has not
// reached a terminal status.
var ErrNotTerminal = errors.New("task has not finished")

// ErrInvalidID is wrapped by ValidateID's errors.
var ErrInvalidID = errors.New("invalid task id")

// MaxIDLen is the longest task id ValidateID accepts.
const MaxIDLen = ids.MaxLen

// ValidateID checks a task id (or an owner id) that came from a model or a
// user before it is looked up or used to build a path: 1 to MaxIDLen
// characters from [A-Za-z0-9_-]. That excludes separators and dots, so no id
// can climb out of a directory ("../x").
func ValidateID(id string) error { return ids.Check(id, ErrInvalidID) }
