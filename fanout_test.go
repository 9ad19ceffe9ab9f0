package cadre_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFanOutSpawnsConcurrently: the Agent calls of one message start their
// children at the same time. Every child holds its first model request
// until all ten children have made theirs, so a spawn that waited for
// another child's run (the loop running the calls one after another, a
// lock held across a child's run, a pool of fewer places than calls) would
// hold the run until the deadline, and the children would fail.
func TestFanOutSpawnsConcurrently(t *testing.T) {
	const n = 10
	f := newFanOut(n)
	// One deadline for the whole barrier, generous for -race on a loaded
	// machine: it ends only a run that could never pass.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		arrived  atomic.Int64
		all      = make(chan struct{})
		failOnce sync.Once
		failure  string
	)
	f.onChild = func(child context.Context) error {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			failOnce.Do(func() {
				failure = fmt.Sprintf("only %d of %d children had made their first model request when the deadline passed", arrived.Load(), n)
			})
			return ctx.Err()
		case <-child.Done():
			return child.Err()
		}
	}
	rt := f.open(t)
	err := f.run(ctx, rt)
	failOnce.Do(func() {}) // orders the read of failure after any write
	if failure != "" {
		t.Fatalf("the spawns did not run at the same time: %s", failure)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := arrived.Load(); got != n {
		t.Errorf("%d children made a model request, want %d", got, n)
	}
}
