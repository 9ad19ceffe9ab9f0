package records

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Joint writes a session's record and a task's in one transaction.
// *sqlite.DB implements it.
type Joint interface {
	CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error
	TransitionSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) (task.Event, error)) (task.Task, error)
}

// InboxJoint is a Joint that also opens a new child's inbox, in its
// Mailbox, in the write that records the child: the PostgreSQL store,
// whose inboxes are rows beside the records. The child's launch then saves
// the round trip of opening it (mailbox.Subscribe).
type InboxJoint interface {
	CreateSessionTaskInbox(ctx context.Context, s session.Info, t task.Task, owner string) error
}

// sharedMailbox is a Mailbox kept in a store (postgres.Mailbox), which
// says whether it is the one a joint store opens inboxes in.
type sharedMailbox interface {
	Shares(store any) bool
}

// Writer writes children's records to the runtime's stores.
type Writer struct {
	// Tasks keeps the task records; Owner is this process's owner id
	// (task.Owner). The joint store, when there is one, is New's choice.
	Tasks task.Store
	Owner string
	// index is the sessions' index, where a session's end goes alone when
	// the joint write of its task's end failed.
	index session.Index
	// joint holds both tasks and sessions and writes them together, or
	// is nil (separate stores, as tests use: every record is then
	// written on its own).
	joint Joint
	// inbox is joint when it opens a new child's inbox with its records,
	// else nil.
	inbox InboxJoint
	log   *slog.Logger
}

// New returns the Writer for these stores: index is the sessions' (nil
// without a session manager), mb the Mailbox (nil without one), owner this
// process's owner id (task.Owner).
func New(tasks task.Store, index session.Index, mb mailbox.Mailbox, owner string, log *slog.Logger) *Writer {
	w := &Writer{Tasks: tasks, index: index, Owner: owner, log: log}
	if j, ok := tasks.(Joint); ok && index != nil && any(index) == any(tasks) {
		w.joint = j
	}
	if ij, ok := w.joint.(InboxJoint); ok {
		if m, ok := mb.(sharedMailbox); ok && m.Shares(w.joint) {
			w.inbox = ij
		}
	}
	return w
}

// Joint reports whether a background child's session and task records are
// written together: its session is then prepared, not created, and its end
// held for its task's.
func (w *Writer) Joint() bool { return w.joint != nil }

// OpensInboxes reports whether the write that records a new child also
// opens its inbox.
func (w *Writer) OpensInboxes() bool { return w.inbox != nil }

// Start writes (or rewrites, for a continued agent) rec, a run's task
// record. A child session not yet recorded (sess, when not nil) is recorded
// in the same write, and with inbox its inbox opened too. Once decided, the
// record is written even if the caller's turn ends.
func (w *Writer) Start(ctx context.Context, rec task.Task, sess *session.Session, inbox bool) error {
	ctx = context.WithoutCancel(ctx)
	if sess != nil && !sess.IsRecorded() {
		var err error
		if inbox {
			err = w.inbox.CreateSessionTaskInbox(ctx, sess.Info, rec, w.Owner)
		} else {
			err = w.joint.CreateSessionTask(ctx, sess.Info, rec)
		}
		if err != nil {
			return fmt.Errorf("record task %s: %w", rec.ID, err)
		}
		sess.Recorded()
		return nil
	}
	err := w.Tasks.CreateTask(ctx, rec)
	if err == nil {
		return nil
	}
	// A continued agent keeps its id: the record is reused, reset.
	if _, gerr := w.Tasks.GetTask(ctx, rec.ID); gerr != nil {
		return fmt.Errorf("record task %s: %w", rec.ID, err)
	}
	ev := task.EventResume
	if rec.Status == task.StatusPending {
		ev = task.EventRequeue
	}
	_, err = w.Tasks.Transition(ctx, rec.ID, func(old *task.Task) (task.Event, error) {
		created, was := old.Created, old.Status
		*old = rec
		old.Created, old.Status = created, was // the event sets it
		return ev, nil
	})
	if err != nil {
		return fmt.Errorf("record task %s: %w", rec.ID, err)
	}
	return nil
}

// End records the end of run id's task (end), with its session's end
// (sessionEnd, held back by the session) in the same write when it is not
// nil. When that joint write fails, the session's end is written on its
// own: it is not lost with the task's.
func (w *Writer) End(ctx context.Context, id string, sessionEnd func(*session.Info) error, end func(*task.Task) (task.Event, error)) error {
	if sessionEnd == nil {
		_, err := w.Tasks.Transition(ctx, id, end)
		return err
	}
	_, err := w.joint.TransitionSessionTask(ctx, id, sessionEnd, id, end)
	if err != nil {
		if serr := w.index.UpdateSession(ctx, id, sessionEnd); serr != nil {
			w.log.WarnContext(ctx, "record the end of a child session", "session_id", id, "err", serr)
		}
	}
	return err
}

// PointOutput points the record of run id at file, this node's output of
// it: a dispatched run that starts here ("" when the store keeps the
// transcript: no file to name).
func (w *Writer) PointOutput(ctx context.Context, id, file string) error {
	if file == "" {
		return nil
	}
	_, err := w.Tasks.UpdateTask(context.WithoutCancel(ctx), id, func(rec *task.Task) error {
		rec.OutputFile = file
		return nil
	})
	if err != nil {
		return fmt.Errorf("record task %s: %w", id, err)
	}
	return nil
}

// Started records that run id, which waited for a lane place, started
// (S-L5: pending, then running). Once it runs, the record is written even
// if ctx ends.
func (w *Writer) Started(ctx context.Context, id string, started time.Time) error {
	_, err := w.Tasks.Transition(context.WithoutCancel(ctx), id, func(rec *task.Task) (task.Event, error) {
		rec.Started = started
		return task.EventStart, nil
	})
	return err
}

// Task is the task record of run, launched here, as it starts with status:
// owned by owner ("" for a run any node may claim), created and
// heartbeating at now, and started at started when it is running.
func Task(run runs.Info, kind task.Kind, status task.Status, owner string, now, started time.Time) task.Task {
	rec := task.Task{
		ID: run.ID, Kind: kind, Agent: run.AgentType, Name: run.Name, Description: run.Description, Prompt: run.Prompt,
		ParentSessionID: run.ParentSessionID, RootSessionID: run.RootSessionID, ChildSessionID: run.ID, ToolUseID: run.AgentCall,
		Status: status, OutputFile: run.OutputFile, Owner: owner, Heartbeat: now, Created: now,
	}
	if status == task.StatusRunning {
		rec.Started = started
	}
	return rec
}

// Session is the record of a new child session id, of agent, started from
// session parent: its key, and its title, the task's description — what a
// list of sessions should say; "(@agent subagent)" only for a call that
// gave none (S-L1).
func Session(id, parent, agent, cwd, model, description string) session.Info {
	return session.Info{
		ID: id, ParentID: parent, Agent: agent, Cwd: cwd, Model: model,
		Key:   "agent:" + agent + ":subagent:" + id,
		Title: cmp.Or(strings.TrimSpace(description), "(@"+agent+" subagent)"),
	}
}
