package queue

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Mailbox holds messages for running agents, by agent id, for senders that
// may not share a process with the run: the PostgreSQL store has the
// version several processes share (postgres.Mailbox); this one lives in
// memory, for one process and for the tests that stand two services on
// one mailbox. The zero value is ready; it is safe for concurrent use.
//
// An agent's inbox is open while a run of it takes messages (Open until
// CloseIfEmpty succeeds): Push refuses a message for an agent whose inbox
// is not open, so its sender knows to resume the agent instead.
type Mailbox struct {
	mu      sync.Mutex
	q       Queue
	open    map[string]bool
	waiters map[string]map[chan struct{}]struct{}
}

// Open opens agentID's inbox, keeping messages left from an earlier run,
// and reports whether any wait. owner (the process running it) is
// recorded by stores that keep it.
func (m *Mailbox) Open(_ context.Context, agentID, _ string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open == nil {
		m.open = map[string]bool{}
	}
	m.open[agentID] = true
	return m.q.Len(agentID) > 0, nil
}

// Push queues e for e.Target and wakes its waiters. It reports false,
// queuing nothing, when e.Target's inbox is not open.
func (m *Mailbox) Push(_ context.Context, e Entry) (bool, error) {
	if e.Target == "" {
		return false, errors.New("push a message: it names no agent (Target is empty)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open[e.Target] {
		return false, nil
	}
	if e.Enqueued.IsZero() {
		e.Enqueued = time.Now()
	}
	m.q.Push(e)
	for ch := range m.waiters[e.Target] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return true, nil
}

// Take removes and returns every entry for agentID, as Queue.Take.
func (m *Mailbox) Take(_ context.Context, agentID string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.q.Take(agentID), nil
}

// CloseIfEmpty closes agentID's inbox when nothing waits in it; otherwise
// it returns what waits and leaves the inbox open.
func (m *Mailbox) CloseIfEmpty(_ context.Context, agentID string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if out := m.q.Take(agentID); len(out) > 0 {
		return out, nil
	}
	delete(m.open, agentID)
	return nil, nil
}

// Arrived returns a channel that receives (coalesced) after each push for
// agentID; stop, or ctx ending, ends it.
func (m *Mailbox) Arrived(ctx context.Context, agentID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	if m.waiters == nil {
		m.waiters = map[string]map[chan struct{}]struct{}{}
	}
	if m.waiters[agentID] == nil {
		m.waiters[agentID] = map[chan struct{}]struct{}{}
	}
	m.waiters[agentID][ch] = struct{}{}
	m.mu.Unlock()
	var once sync.Once
	unsubscribe := func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			delete(m.waiters[agentID], ch)
			if len(m.waiters[agentID]) == 0 {
				delete(m.waiters, agentID)
			}
		})
	}
	after := context.AfterFunc(ctx, unsubscribe)
	return ch, func() {
		after()
		unsubscribe()
	}
}
