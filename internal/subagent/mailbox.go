package subagent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
)

// Reaching runs in other processes that share the store (S-X2): messages
// sent to an agent that runs elsewhere, and a stop requested elsewhere,
// heard at once rather than at the next poll.

// Mailbox holds messages for running agents where every process sharing
// the store can push them and the process running the agent takes them
// (queue.Mailbox in memory, postgres.Mailbox across processes). An agent's
// inbox is open while a run of it takes messages; a push to a closed one is
// refused, and its sender resumes the agent instead.
type Mailbox interface {
	// Open opens agentID's inbox for a run executed by owner.
	Open(ctx context.Context, agentID, owner string) error
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

// inbox is one run's side of the Mailbox: it takes from the mailbox only
// when a push may have arrived since it last took, so that a run's loop
// boundaries do not each cost a round trip to the store.
type inbox struct {
	mb      Mailbox
	id      string
	arrived <-chan struct{}
	stop    func()

	mu sync.Mutex
	// maybe is set when something may wait: at the start (an earlier run
	// may have left messages), after each arrival, and after a failed take.
	maybe bool
}

// openInbox subscribes to arrivals for run id, then opens its inbox (in
// that order, so no push between the two goes unheard). The run must
// close it (close) once it ends, whatever the error.
func (s *Service) openInbox(ctx context.Context, id string) *inbox {
	if s.cfg.Mailbox == nil {
		return nil
	}
	arrived, stop := s.cfg.Mailbox.Arrived(context.WithoutCancel(ctx), id)
	in := &inbox{mb: s.cfg.Mailbox, id: id, arrived: arrived, stop: stop, maybe: true}
	if err := s.cfg.Mailbox.Open(context.WithoutCancel(ctx), id, s.cfg.Owner); err != nil {
		// Messages from other processes are refused; theirs resume the
		// agent once this run ends.
		s.log.WarnContext(ctx, "open a run's inbox: messages from other processes cannot reach it", "agent_id", id, "err", err)
	}
	return in
}

// noted records an arrival the caller received from in.arrived.
func (in *inbox) noted() {
	in.mu.Lock()
	in.maybe = true
	in.mu.Unlock()
}

// take returns what waits in the mailbox for the run, if anything may.
func (s *Service) takeInbox(ctx context.Context, in *inbox) []queue.Entry {
	if in == nil {
		return nil
	}
	select {
	case <-in.arrived:
		in.noted()
	default:
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.maybe {
		return nil
	}
	es, err := in.mb.Take(context.WithoutCancel(ctx), in.id)
	if err != nil {
		s.log.WarnContext(ctx, "take the messages queued for a run", "agent_id", in.id, "err", err)
		return nil
	}
	in.maybe = false
	return es
}

// closeInbox closes the run's inbox unless something waits in it, which
// it returns for the run to answer (the inbox then stays open). With
// answer false (the run failed or was stopped) it closes the inbox anyway:
// what waits is dropped, with a warning.
func (s *Service) closeInbox(ctx context.Context, in *inbox, answer bool) []queue.Entry {
	if in == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for {
		es, err := in.mb.CloseIfEmpty(ctx, in.id)
		if err != nil {
			s.log.WarnContext(ctx, "close a run's inbox", "agent_id", in.id, "err", err)
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
		s.log.WarnContext(ctx, "messages sent to a run that ended before reading them are dropped", "agent_id", in.id, "count", len(es))
	}
}

// sendElsewhere queues a message for agent id when its record says it runs
// in another process, and reports whether it did. An agent running
// nowhere, or whose run closed its inbox, is not queued for: the caller
// resumes it.
func (s *Service) sendElsewhere(ctx context.Context, e queue.Entry) (bool, error) {
	rec, err := s.cfg.Tasks.GetTask(ctx, e.Target)
	if errors.Is(err, task.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if rec.Status.Terminal() || rec.Owner == s.cfg.Owner {
		return false, nil
	}
	if queued, err := s.cfg.Mailbox.Push(ctx, e); err != nil || queued {
		return queued, err
	}
	// Its run has stopped reading messages but has not recorded its end
	// yet: wait for the end, so that the agent can be resumed, as send
	// waits for a run of this process.
	return false, s.awaitRecordedEnd(ctx, e.Target)
}

// endingWait bounds the wait for a run in another process, closed to
// messages, to record its end: a process that died just then leaves its
// record running until the orphan sweep, and a tool call must not hang
// that long.
const endingWait = time.Minute

// awaitRecordedEnd waits until task id's record says it ended, hearing of
// changes through the TaskWatcher if there is one, else polling at
// WatchInterval.
func (s *Service) awaitRecordedEnd(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, endingWait)
	defer cancel()
	var changed <-chan struct{}
	if s.cfg.Watch != nil {
		ch, stop := s.cfg.Watch.WatchTask(ctx, id)
		defer stop()
		changed = ch
	}
	tick := time.NewTicker(s.cfg.WatchInterval)
	defer tick.Stop()
	for {
		rec, err := s.cfg.Tasks.GetTask(ctx, id)
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
