package subagent

import (
	"context"
	"testing"
	"testing/synctest"
)

// TestLaneMovedRunsComeFirst: a run moved to the background takes a free
// slot, or else the next one that frees, before any run waiting to start;
// one that ends before it got a slot gives up its place.
func TestLaneMovedRunsComeFirst(t *testing.T) { synctest.Test(t, testLaneMovedRunsComeFirst) }

func testLaneMovedRunsComeFirst(t *testing.T) {
	l := newLane(1)
	if err := l.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	moved := l.join() // lane full: owed the next slot
	if moved.held {
		t.Fatal("a moved run got a slot of a full lane")
	}
	started := make(chan error, 1)
	go func() { started <- l.acquire(context.Background()) }()
	eventually(t, "the pending run waits", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.waiting) == 1
	})
	l.release() // the first run ends: its slot goes to the moved run
	l.mu.Lock()
	held, pending := moved.held, len(l.waiting)
	l.mu.Unlock()
	if !held || pending != 1 {
		t.Fatalf("after a release: moved run holds a slot %v, %d runs waiting; want true, 1", held, pending)
	}
	l.leave(moved) // the moved run ends: the pending run starts
	if err := recv(t, started, "the pending run to start"); err != nil {
		t.Fatal(err)
	}
	gone := l.join()
	l.leave(gone) // ended before it had a slot
	l.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used != 0 || len(l.owed) != 0 || len(l.waiting) != 0 {
		t.Errorf("lane left with %d used, %d owed, %d waiting; want all 0", l.used, len(l.owed), len(l.waiting))
	}
}

// TestLaneCancelledWaiterPassesTheSlotOn: a pending run cancelled while it
// waits leaves no hole and takes no slot with it.
func TestLaneCancelledWaiterPassesTheSlotOn(t *testing.T) {
	synctest.Test(t, testLaneCancelledWaiterPassesTheSlotOn)
}

func testLaneCancelledWaiterPassesTheSlotOn(t *testing.T) {
	l := newLane(1)
	if err := l.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- l.acquire(ctx) }()
	eventually(t, "the run waits", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.waiting) == 1
	})
	cancel()
	if err := recv(t, gaveUp, "the cancelled run"); err == nil {
		t.Fatal("a cancelled wait took a slot")
	}
	l.release()
	if err := l.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used != 1 || len(l.waiting) != 0 {
		t.Errorf("lane: %d used, %d waiting; want 1, 0", l.used, len(l.waiting))
	}
}
