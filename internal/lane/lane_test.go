package lane

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// The lane starts each waiter's run in a goroutine: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLaneMovedRunsComeFirst: a run moved to the background takes a free
// slot, or else the next one that frees, before any run waiting to start;
// one that ends before it got a slot gives up its place.
func TestLaneMovedRunsComeFirst(t *testing.T) { synctest.Test(t, testLaneMovedRunsComeFirst) }

func testLaneMovedRunsComeFirst(t *testing.T) {
	l := New(1)
	if !l.TryAcquire() {
		t.Fatal("an empty lane has no free slot")
	}
	moved := l.Join() // lane full: owed the next slot
	if moved.held {
		t.Fatal("a moved run got a slot of a full lane")
	}
	started := make(chan struct{})
	l.Wait(&Waiter{Start: func() { close(started) }})
	if n := l.pending(); n != 1 {
		t.Fatalf("%d runs waiting in a full lane, want 1", n)
	}
	l.Release() // the first run ends: its slot goes to the moved run
	l.mu.Lock()
	held := moved.held
	l.mu.Unlock()
	if !held || l.pending() != 1 {
		t.Fatalf("after a release: moved run holds a slot %v, %d runs waiting; want true, 1", held, l.pending())
	}
	l.Leave(moved) // the moved run ends: the pending run starts
	recv(t, started, "the pending run to start")
	gone := l.Join()
	l.Leave(gone) // ended before it had a slot
	l.Release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used != 0 || len(l.owed) != 0 || len(l.waiting) != 0 {
		t.Errorf("lane left with %d used, %d owed, %d waiting; want all 0", l.used, len(l.owed), len(l.waiting))
	}
}

// TestLaneDroppedWaiter: a pending run dropped while it waits leaves no
// hole, takes no slot with it and never starts; a waiter dropped before it
// was queued is not queued; a started one cannot be dropped.
func TestLaneDroppedWaiter(t *testing.T) { synctest.Test(t, testLaneDroppedWaiter) }

func testLaneDroppedWaiter(t *testing.T) {
	l := New(1)
	l.TryAcquire()
	never := func() { t.Error("a dropped waiter started") }
	queued := &Waiter{Start: never}
	l.Wait(queued)
	if !l.Drop(queued) {
		t.Fatal("a queued waiter could not be dropped")
	}
	if l.Drop(queued) {
		t.Error("a waiter was dropped twice")
	}
	early := &Waiter{Start: never}
	if !l.Drop(early) {
		t.Fatal("a waiter not queued yet could not be dropped")
	}
	l.Wait(early)
	if n := l.pending(); n != 0 {
		t.Fatalf("%d runs waiting after the drops, want 0", n)
	}
	l.Release() // back to the lane, not to a dropped waiter
	started := make(chan struct{})
	next := &Waiter{Start: func() { close(started) }}
	l.Wait(next) // a free slot: it starts at once
	recv(t, started, "a waiter in a free lane to start")
	if l.Drop(next) {
		t.Error("a started waiter was dropped")
	}
	synctest.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used != 1 || len(l.waiting) != 0 {
		t.Errorf("lane: %d used, %d waiting; want 1, 0", l.used, len(l.waiting))
	}
}

// pending is how many runs wait to start.
func (l *Lane) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting)
}

// recv waits for ch to close or send, failing the test after a minute of
// the bubble's time.
func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("timed out waiting for %s", what)
	}
}
