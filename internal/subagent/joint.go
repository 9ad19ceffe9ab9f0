package subagent

import (
	"context"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// A background child touches two records, its session's and its task's,
// when it starts and when it ends. Where one store holds both (the SQLite
// store of a runtime), each pair is one write: the session is created
// without its record (session.Manager.Prepare) and recorded with the task,
// and its end is held back (session.Session.Hold) for the write that
// records the task's. A child that can start at once is recorded running
// in its first write; one that waits for a lane slot records its start
// when it gets one (S-L5: pending, then running).

// jointStore writes a session's record and a task's in one transaction.
// *sqlite.DB implements it.
type jointStore interface {
	CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error
	TransitionSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) (task.Event, error)) (task.Task, error)
}

// inboxJoint is a jointStore that also opens a new child's inbox, in its
// Mailbox, in the write that records the child: the PostgreSQL store,
// whose inboxes are rows beside the records. The child's launch then saves
// the round trip of opening it (mailbox.Subscribe).
type inboxJoint interface {
	CreateSessionTaskInbox(ctx context.Context, s session.Info, t task.Task, owner string) error
}

// sharedMailbox is a Mailbox kept in a store (postgres.Mailbox), which
// says whether it is the one a joint store opens inboxes in.
type sharedMailbox interface {
	Shares(store any) bool
}

// inboxJointOf returns j when it opens inboxes in cfg's Mailbox, else nil.
func inboxJointOf(cfg Config, j jointStore) inboxJoint {
	ij, ok := j.(inboxJoint)
	if !ok {
		return nil
	}
	if m, ok := cfg.Mailbox.(sharedMailbox); !ok || !m.Shares(j) {
		return nil
	}
	return ij
}

// jointOf returns the store that holds both cfg's sessions and its tasks
// when it can write them together, else nil (separate stores, as tests use:
// every record is then written on its own).
func jointOf(cfg Config) jointStore {
	j, ok := cfg.Tasks.(jointStore)
	if !ok || cfg.Sessions == nil || any(cfg.Sessions.Index()) != any(cfg.Tasks) {
		return nil
	}
	return j
}

// startsInBackground reports whether req, for def, is launched as a
// background task rather than run in the foreground.
func startsInBackground(req SpawnRequest, def agent.Definition) bool {
	return !req.Foreground && (req.Background || def.Background || (req.Timeout != nil && *req.Timeout == 0))
}
