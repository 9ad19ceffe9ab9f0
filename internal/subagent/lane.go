package subagent

import (
	"context"
	"slices"
	"sync"
)

// lane is the subagent lane (S-C2): at most size background runs hold a
// slot at once, and a run started in the background waits for one,
// pending. A run moved to the background (timeout_seconds, Ctrl+B) is
// already running and is not paused: it joins the lane, taking a free slot
// at once, or else the next slot that frees, before any run still waiting
// to start. Until it has one the lane runs over its size by one.
type lane struct {
	mu      sync.Mutex
	size    int
	used    int
	waiting []chan struct{} // runs waiting to start, oldest first; closed when handed a slot
	owed    []*laneSlot     // moved runs still waiting for a slot, oldest first
}

// laneSlot is a moved run's place in the lane.
type laneSlot struct{ held bool }

func newLane(size int) *lane { return &lane{size: max(size, 1)} }

// acquire waits for a slot for a run about to start in the background.
func (l *lane) acquire(ctx context.Context) error {
	l.mu.Lock()
	if l.used < l.size {
		// A free slot means nobody waits: a freed slot is handed on.
		l.used++
		l.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	l.waiting = append(l.waiting, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-ch:
		// Handed a slot while giving up: pass it on.
		l.free()
	default:
		l.waiting = slices.DeleteFunc(l.waiting, func(c chan struct{}) bool { return c == ch })
	}
	// The plain error, as a cancelled run reports it: the status (killed
	// or timeout) and the error text come from the cause.
	return ctx.Err()
}

// tryAcquire takes a free slot for a run about to start in the background,
// if there is one, without waiting.
func (l *lane) tryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used < l.size {
		l.used++
		return true
	}
	return false
}

// release gives back a slot taken by acquire or tryAcquire.
func (l *lane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free()
}

// free hands a slot on: to the oldest moved run owed one, else to the
// oldest run waiting to start, else back to the lane. l.mu is held.
func (l *lane) free() {
	switch {
	case len(l.owed) > 0:
		l.owed[0].held = true
		l.owed = l.owed[1:]
	case len(l.waiting) > 0:
		close(l.waiting[0])
		l.waiting = l.waiting[1:]
	default:
		l.used--
	}
}

// join counts a run that moved to the background while running.
func (l *lane) join() *laneSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &laneSlot{}
	if l.used < l.size {
		l.used++
		s.held = true
	} else {
		l.owed = append(l.owed, s)
	}
	return s
}

// leave ends a joined run's place in the lane: its slot, if it got one,
// is handed on.
func (l *lane) leave(s *laneSlot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.held {
		l.free()
		return
	}
	l.owed = slices.DeleteFunc(l.owed, func(o *laneSlot) bool { return o == s })
}
