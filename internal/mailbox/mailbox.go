package mailbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
)

// Mailbox holds messages for running agents where every process sharing
// the store can push them and the process running the agent takes them
// (queue.Mailbox in memory, postgres.Mailbox across processes). An agent's
// inbox is open while a run of it takes messages; a push to a closed one is
// refused, and its sender resumes the agent instead.
type Mailbox interface {
	// Open opens agentID's inbox for a run executed by owner, and
	// reports whether messages already wait in it (left from an earlier
	// run).
	Open(ctx context.Context, agentID, owner string) (bool, error)
	// Push queues e for e.Target; false when its inbox is not open.
	Push(ctx context.Context, e queue.Entry) (bool, error)
	// Take removes and returns what waits for agentID, each entry to
	// exactly one taker.
	Take(ctx context.Context, agentID string) ([]queue.Entry, error)
	// CloseIfEmpty closes agentID's inbox if nothing waits, else returns
	// what waits and leaves it open.
	CloseIfEmpty(ctx context.Context, agentID string) ([]queue.Entry, error)
	// Arrived receives after a push for agentID (and whenever a push may
	// have been missed); stop ends it.
	Arrived(ctx context.Context, agentID string) (<-chan struct{}, func())
}

// TaskWatcher tells at once that a task's record changed, through any
// process: the PostgreSQL store's WatchTask.
type TaskWatcher interface {
	// WatchTask returns a channel that receives (coalesced) after
	// taskID's record changes, and whenever a change may have been
	// missed; the receiver reads the record again. stop ends the watch.
	WatchTask(ctx context.Context, taskID string) (changed <-chan struct{}, stop func())
}

// Inbox is one run's side of the Mailbox: it takes from the mailbox only
// when a push may have arrived since it last took, so that a run's loop
// boundaries do not each cost a round trip to the store. A nil *Inbox (no
// Mailbox) takes nothing and never arrives.
type Inbox struct {
	mb      Mailbox
	id      string
	log     *slog.Logger
	arrived <-chan struct{}
	stop    func()

	// withRecord: the store opens the inbox in the write that records
	// the run (Subscribe), not Open.
	withRecord bool

	mu sync.Mutex
	// maybe is set when something may wait: at the start if an earlier
	// run left messages (or the open failed to say), after each arrival,
	// and after a failed take.
	maybe bool
}

// Open subscribes to arrivals for run id, executed by owner, then opens its
// inbox (in that order, so no push between the two goes unheard); nil when
// mb is nil. The run must Close it once it ends, whatever the error. A
// failure to open is logged: messages from other processes are then
// refused, and theirs resume the agent once this run ends.
func Open(ctx context.Context, mb Mailbox, id, owner string, log *slog.Logger) *Inbox {
	if mb == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	arrived, stop := mb.Arrived(ctx, id)
	in := &Inbox{mb: mb, id: id, log: log, arrived: arrived, stop: stop, maybe: true}
	waiting, err := mb.Open(ctx, id, owner)
	if err != nil {
		log.WarnContext(ctx, "open a run's inbox: messages from other processes cannot reach it", "agent_id", id, "err", err)
	}
	// A new agent's inbox is empty: its first loop boundary takes only
	// if a push arrives, which the subscription above hears.
	in.maybe = waiting || err != nil
	return in
}

// Subscribe is Open for a new agent whose inbox the store opens in the
// same write as the run's records (postgres.DB.CreateSessionTaskInbox),
// which the caller makes next: it only subscribes to arrivals, saving the
// open's round trip. Until that write nobody can push to the inbox, so
// nothing waits in it. nil when mb is nil.
func Subscribe(ctx context.Context, mb Mailbox, id string, log *slog.Logger) *Inbox {
	if mb == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	arrived, stop := mb.Arrived(ctx, id)
	return &Inbox{mb: mb, id: id, log: log, arrived: arrived, stop: stop, withRecord: true}
}

// OpensWithRecord reports whether the run's record write must open the
// inbox (Subscribe).
func (in *Inbox) OpensWithRecord() bool { return in != nil && in.withRecord }

// Arrived receives after a push may have arrived; Noted must then be
// called. Nil for a nil Inbox: it never receives.
func (in *Inbox) Arrived() <-chan struct{} {
	if in == nil {
		return nil
	}
	return in.arrived
}

// Noted records an arrival the caller received from Arrived.
func (in *Inbox) Noted() {
	in.mu.Lock()
	in.maybe = true
	in.mu.Unlock()
}

// Take returns what waits in the mailbox for the run, if anything may.
func (in *Inbox) Take(ctx context.Context) []queue.Entry {
	if in == nil {
		return nil
	}
	select {
	case <-in.arrived:
		in.Noted()
	default:
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.maybe {
		return nil
	}
	es, err := in.mb.Take(context.WithoutCancel(ctx), in.id)
	if err != nil {
		in.log.WarnContext(ctx, "take the messages queued for a run", "agent_id", in.id, "err", err)
		return nil
	}
	in.maybe = false
	return es
}

// Close closes the run's inbox unless something waits in it, which it
// returns for the run to answer (the inbox then stays open). With answer
// false (the run failed or was stopped) it closes the inbox anyway: what
// waits is dropped, with a warning.
func (in *Inbox) Close(ctx context.Context, answer bool) []queue.Entry {
	if in == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for {
		es, err := in.mb.CloseIfEmpty(ctx, in.id)
		if err != nil {
			in.log.WarnContext(ctx, "close a run's inbox", "agent_id", in.id, "err", err)
			in.stop()
			return nil
		}
		if len(es) == 0 {
			in.stop()
			return nil
		}
		if answer {
			return es
		}
		in.log.WarnContext(ctx, "messages sent to a run that ended before reading them are dropped", "agent_id", in.id, "count", len(es))
	}
}

// Records reads task records: what a Courier needs of the task store.
type Records interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
}

// Courier carries messages to agents whose runs this process does not
// execute.
type Courier struct {
	Tasks   Records
	Mailbox Mailbox
	// Watch, if set, hears at once that a record changed; else the
	// Courier polls at Interval.
	Watch    TaskWatcher
	Interval time.Duration
	// Owner is this process's owner id: an agent whose record names it
	// runs here, not elsewhere.
	Owner string
}

// SendElsewhere queues a message for agent e.Target when its record says
// it runs in another process, and reports whether it did. An agent
// running nowhere, or whose run closed its inbox, is not queued for: the
// caller resumes it.
func (c Courier) SendElsewhere(ctx context.Context, e queue.Entry) (bool, error) {
	rec, err := c.Tasks.GetTask(ctx, e.Target)
	if errors.Is(err, task.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if rec.Status.Terminal() || rec.Owner == c.Owner {
		return false, nil
	}
	if queued, err := c.Mailbox.Push(ctx, e); err != nil || queued {
		return queued, err
	}
	// Its run has stopped reading messages but has not recorded its end
	// yet: wait for the end, so that the agent can be resumed, as a send
	// waits for a run of this process.
	return false, c.AwaitRecordedEnd(ctx, e.Target)
}

// EndingWait bounds the wait for a run in another process, closed to
// messages, to record its end: a process that died just then leaves its
// record running until the orphan sweep, and a tool call must not hang
// that long.
const EndingWait = time.Minute

// AwaitRecordedEnd waits, at most EndingWait, until task id's record says
// it ended, hearing of changes through the TaskWatcher if there is one,
// else polling at Interval.
func (c Courier) AwaitRecordedEnd(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, EndingWait)
	defer cancel()
	var changed <-chan struct{}
	if c.Watch != nil {
		ch, stop := c.Watch.WatchTask(ctx, id)
		defer stop()
		changed = ch
	}
	tick := time.NewTicker(c.Interval)
	defer tick.Stop()
	for {
		rec, err := c.Tasks.GetTask(ctx, id)
		if err != nil {
			return err
		}
		if rec.Status.Terminal() {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("agent %s has stopped reading messages in another process but its end is not recorded yet; send the message again once it has ended: %w", id, context.Cause(ctx))
		}
	}
}
