package lane

import (
	"slices"
	"sync"
)

// Lane is the subagent lane (S-C2): at most size background runs hold a
// slot at once, and a run started in the background waits for one,
// pending. A run moved to the background (timeout_seconds, Ctrl+B) is
// already running and is not paused: it joins the lane, taking a free slot
// at once, or else the next slot that frees, before any run still waiting
// to start. Until it has one the lane runs over its size by one.
//
// A pending run is a Waiter, not a goroutine: a thousand runs queued
// behind a lane of 64 would otherwise hold a thousand stacks, each as large
// as the runtime's adaptive start makes new goroutines after deep spawns.
// A Lane is safe for concurrent use.
type Lane struct {
	mu      sync.Mutex
	size    int
	used    int
	waiting []*Waiter // runs waiting to start, oldest first
	owed    []*Slot   // moved runs still waiting for a slot, oldest first
}

// Slot is a moved run's place in the lane.
type Slot struct{ held bool }

// Waiter is a run waiting to start in the background. The slot handed
// to it starts it: Start runs in a goroutine of its own, which its caller
// counted before Wait (the lane does not own it), and gives the slot back
// with Release when the run ends.
type Waiter struct {
	// Start runs the run; it is called once, in a goroutine of its own.
	Start func()
	state waiterState // under Lane.mu
}

type waiterState uint8

const (
	waiterNew waiterState = iota
	waiterQueued
	waiterStarted
	waiterDropped
)

// New returns a lane of size places (at least one).
func New(size int) *Lane { return &Lane{size: max(size, 1)} }

// Wait starts w at once if a slot is free, else queues it for the next
// one. A waiter dropped before it was queued is not.
func (l *Lane) Wait(w *Waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case w.state != waiterNew:
	case l.used < l.size:
		// A free slot means nobody waits: a freed slot is handed on.
		l.used++
		w.state = waiterStarted
		go w.Start()
	default:
		w.state = waiterQueued
		l.waiting = append(l.waiting, w)
	}
}

// Drop takes w out of the lane before it starts. It reports whether it
// did: then w's Start is never called. False means w started (or was
// dropped before).
func (l *Lane) Drop(w *Waiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch w.state {
	case waiterQueued:
		l.waiting = slices.DeleteFunc(l.waiting, func(o *Waiter) bool { return o == w })
	case waiterNew:
	default:
		return false
	}
	w.state = waiterDropped
	return true
}

// TryAcquire takes a free slot for a run about to start in the background,
// if there is one, without waiting.
func (l *Lane) TryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used < l.size {
		l.used++
		return true
	}
	return false
}

// Release gives back a slot taken by TryAcquire or handed to a waiter.
func (l *Lane) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free()
}

// free hands a slot on: to the oldest moved run owed one, else to the
// oldest run waiting to start, else back to the lane. l.mu is held.
func (l *Lane) free() {
	switch {
	case len(l.owed) > 0:
		l.owed[0].held = true
		l.owed = l.owed[1:]
	case len(l.waiting) > 0:
		w := l.waiting[0]
		l.waiting[0] = nil
		l.waiting = l.waiting[1:]
		w.state = waiterStarted
		go w.Start()
	default:
		l.used--
	}
}

// Join counts a run that moved to the background while running.
func (l *Lane) Join() *Slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &Slot{}
	if l.used < l.size {
		l.used++
		s.held = true
	} else {
		l.owed = append(l.owed, s)
	}
	return s
}

// Leave ends a joined run's place in the lane: its slot, if it got one,
// is handed on.
func (l *Lane) Leave(s *Slot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.held {
		l.free()
		return
	}
	l.owed = slices.DeleteFunc(l.owed, func(o *Slot) bool { return o == s })
}
