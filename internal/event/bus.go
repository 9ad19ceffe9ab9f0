package event

import (
	"context"
	"iter"
	"sync"
)

// Bus fans events out to subscribers. Publishing never blocks and no
// subscriber ever loses an event: each subscription has its own unbounded
// queue, so a slow reader (a blocked stdout) costs memory, not correctness,
// and can never stall a running agent.
type Bus struct {
	mu   sync.Mutex
	subs map[*Sub]struct{}
}

// Publish delivers e to every subscription whose filter accepts it.
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.filter == nil || s.filter(e) {
			s.push(e)
		}
	}
}

// Subscribe starts a subscription receiving the events filter accepts (all
// of them when filter is nil) from now on.
func (b *Bus) Subscribe(filter func(Event) bool) *Sub {
	s := &Sub{bus: b, filter: filter, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[*Sub]struct{}{}
	}
	b.subs[s] = struct{}{}
	return s
}

// Sub is one subscription.
type Sub struct {
	bus    *Bus
	filter func(Event) bool

	mu    sync.Mutex
	queue []Event
	// spare is the batch Events last delivered, emptied, for the queue to
	// reuse: a run of 10,000 background children publishes some 50,000
	// events, and a queue grown anew after each batch was 5% of all that
	// run allocated.
	spare  []Event
	closed bool
	wake   chan struct{} // capacity 1: "the queue changed"
}

func (s *Sub) push(e Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close ends the subscription: no more events are queued, and Events ends
// once it has delivered what was queued before.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// maxSpare is the largest batch kept for reuse (300 KB of events): a
// burst larger than that is not held for good.
const maxSpare = 1024

// Events yields queued events in publish order until the subscription is
// closed and drained, or ctx ends. Only one goroutine may range over it.
func (s *Sub) Events(ctx context.Context) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			s.mu.Lock()
			batch := s.queue
			s.queue, s.spare = s.spare, nil
			closed := s.closed
			s.mu.Unlock()
			for _, e := range batch {
				if !yield(e) {
					return
				}
			}
			if cap(batch) <= maxSpare {
				clear(batch) // what the events hold may go
				s.mu.Lock()
				s.spare = batch[:0]
				s.mu.Unlock()
			}
			if len(batch) > 0 {
				continue
			}
			if closed {
				return
			}
			select {
			case <-s.wake:
			case <-ctx.Done():
				return
			}
		}
	}
}
