package subagent

import (
	"slices"
	"sync"
)

// lane is the subagent lane (S-C2): at most size background runs hold a
// slot at once, and a run started in the background waits for one,
// pending. A run moved to the background (timeout_seconds, Ctrl+B) is
// already running and is not paused: it joins the lane, taking a free slot
// at once, or else the next slot that frees, before any run still waiting
// to start. Until it has one the lane runs over its size by one.
//
// A pending run is a laneWaiter, not a goroutine: a thousand runs queued
// behind a lane of 64 would otherwise hold a thousand stacks, each as large
// as the runtime's adaptive start makes new goroutines after deep spawns.
type lane struct {
	mu      sync.Mutex
	size    int
	used    int
	waiting []*laneWaiter // runs waiting to start, oldest first
	owed    []*laneSlot   // moved runs still waiting for a slot, oldest first
}

// laneSlot is a moved run's place in the lane.
type laneSlot struct{ held bool }

// laneWaiter is a run waiting to start in the background. The slot handed
// to it starts it: start runs in a goroutine of its own, which its caller
// counted before wait (the lane does not own it), and gives the slot back
// with release when the run ends.
type laneWaiter struct {
	start func()
	state waiterState // under lane.mu
}

type waiterState uint8

const (
	waiterNew waiterState = iota
	waiterQueued
	waiterStarted
	waiterDropped
)

func newLane(size int) *lane { return &lane{size: max(size, 1)} }

// wait starts w at once if a slot is free, else queues it for the next
// one. A waiter dropped before it was queued is not.
func (l *lane) wait(w *laneWaiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case w.state != waiterNew:
	case l.used < l.size:
		// A free slot means nobody waits: a freed slot is handed on.
		l.used++
		w.state = waiterStarted
		go w.start()
	default:
		w.state = waiterQueued
		l.waiting = append(l.waiting, w)
	}
}

// drop takes w out of the lane before it starts. It reports whether it
// did: then w's start is never called. False means w started (or was
// dropped before).
func (l *lane) drop(w *laneWaiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch w.state {
	case waiterQueued:
		l.waiting = slices.DeleteFunc(l.waiting, func(o *laneWaiter) bool { return o == w })
	case waiterNew:
	default:
		return false
	}
	w.state = waiterDropped
	return true
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

// release gives back a slot taken by tryAcquire or handed to a waiter.
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
		w := l.waiting[0]
		l.waiting[0] = nil
		l.waiting = l.waiting[1:]
		w.state = waiterStarted
		go w.start()
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
