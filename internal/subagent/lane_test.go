package subagent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestLaneMovedRunsComeFirst: a run moved to the background takes a free
// slot, or else the next one that frees, before any run waiting to start;
// one that ends before it got a slot gives up its place.
func TestLaneMovedRunsComeFirst(t *testing.T) { synctest.Test(t, testLaneMovedRunsComeFirst) }

func testLaneMovedRunsComeFirst(t *testing.T) {
	l := newLane(1)
	if !l.tryAcquire() {
		t.Fatal("an empty lane has no free slot")
	}
	moved := l.join() // lane full: owed the next slot
	if moved.held {
		t.Fatal("a moved run got a slot of a full lane")
	}
	started := make(chan struct{})
	l.wait(&laneWaiter{start: func() { close(started) }})
	if n := l.pending(); n != 1 {
		t.Fatalf("%d runs waiting in a full lane, want 1", n)
	}
	l.release() // the first run ends: its slot goes to the moved run
	l.mu.Lock()
	held := moved.held
	l.mu.Unlock()
	if !held || l.pending() != 1 {
		t.Fatalf("after a release: moved run holds a slot %v, %d runs waiting; want true, 1", held, l.pending())
	}
	l.leave(moved) // the moved run ends: the pending run starts
	recv(t, started, "the pending run to start")
	gone := l.join()
	l.leave(gone) // ended before it had a slot
	l.release()
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
	l := newLane(1)
	l.tryAcquire()
	never := func() { t.Error("a dropped waiter started") }
	queued := &laneWaiter{start: never}
	l.wait(queued)
	if !l.drop(queued) {
		t.Fatal("a queued waiter could not be dropped")
	}
	if l.drop(queued) {
		t.Error("a waiter was dropped twice")
	}
	early := &laneWaiter{start: never}
	if !l.drop(early) {
		t.Fatal("a waiter not queued yet could not be dropped")
	}
	l.wait(early)
	if n := l.pending(); n != 0 {
		t.Fatalf("%d runs waiting after the drops, want 0", n)
	}
	l.release() // back to the lane, not to a dropped waiter
	started := make(chan struct{})
	next := &laneWaiter{start: func() { close(started) }}
	l.wait(next) // a free slot: it starts at once
	recv(t, started, "a waiter in a free lane to start")
	if l.drop(next) {
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
func (l *lane) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting)
}

// TestPendingRunHoldsNoFiles: a background run waiting for a lane place
// has its records but no transcript and no output file; TaskOutput shows
// it empty. It gets both, one file under two names, when it starts; one
// stopped while it waited ends with an empty transcript and its status.
func TestPendingRunHoldsNoFiles(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{sqlite: true, subagents: config.Subagents{MaxConcurrent: 1}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done " + firstUserText(req)), nil
	}})
	ctx := t.Context()
	c := h.mainCaller()
	const queued = "waits for a free place"
	if text := resultText(h.mustCall(c, "toolu_1", AgentInput{Description: "holds the lane", Prompt: "a", RunInBackground: true})); strings.Contains(text, queued) {
		t.Errorf("the launch of a run that started at once says it waits:\n%s", text)
	}
	recv(t, g.entered, "the first child")
	res := h.mustCall(c, "toolu_2", AgentInput{Description: "waits", Prompt: "b", RunInBackground: true})
	if text := resultText(res); !strings.Contains(text, queued) || !strings.Contains(text, "from when it starts") {
		t.Errorf("the launch of a queued run does not say it waits:\n%s", text)
	}
	pending := childID(t, res)
	stopped := h.launchBG(c, "toolu_3", AgentInput{Description: "waits, then is stopped", Prompt: "c"})
	files := func(id string) (transcript, output string) {
		info, err := h.svc.cfg.Index.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.TranscriptPath, h.record(id).OutputFile
	}
	// What front ends list (Group.Runs): waiting, not running.
	listed := func(id string) task.Status {
		for _, r := range c.Group.Runs() {
			if r.ID == id {
				return r.Status
			}
		}
		return ""
	}
	for _, id := range []string{pending, stopped} {
		if st := h.record(id).Status; st != task.StatusPending {
			t.Fatalf("task %s is %s, want pending", id, st)
		}
		if st := listed(id); st != task.StatusPending {
			t.Errorf("Group.Runs lists the waiting run %s as %s, want pending", id, st)
		}
		tr, out := files(id)
		for _, p := range []string{tr, out} {
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("pending task %s: %s exists (stat: %v)", id, p, err)
			}
		}
		if got, err := h.svc.Output(ctx, h.record(id)); err != nil || got != "" {
			t.Errorf("Output of pending task %s = %q, %v; want empty", id, got, err)
		}
	}
	if res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: stopped}); res.IsError {
		t.Fatalf("TaskStop: %s", resultText(res))
	}
	send(t, g.release, struct{}{}, "the first child's release")
	recv(t, g.entered, "the pending child, started")
	if st := listed(pending); st != task.StatusRunning {
		t.Errorf("Group.Runs lists the started run as %s, want running", st)
	}
	tr, out := files(pending)
	a, aerr := os.Stat(tr)
	b, berr := os.Stat(out)
	if aerr != nil || berr != nil || !os.SameFile(a, b) {
		t.Errorf("started task: transcript %v, output file %v, same file %v; want one file under both names", aerr, berr, aerr == nil && berr == nil && os.SameFile(a, b))
	}
	send(t, g.release, struct{}{}, "the second child's release")
	h.awaitEntries("", 3)
	if got, err := h.svc.Output(ctx, h.record(pending)); err != nil || !strings.Contains(got, "done b") || !strings.Contains(got, "[completed]") {
		t.Errorf("Output of the finished task = %q, %v", got, err)
	}
	tr, _ = files(stopped)
	if entries, _, err := session.ReadTranscript(tr); err != nil || len(entries) != 0 {
		t.Errorf("transcript of the stopped task: %d entries, %v; want an empty one", len(entries), err)
	}
	rec := h.record(stopped)
	if got, err := h.svc.Output(ctx, rec); rec.Status != task.StatusKilled || err != nil || !strings.Contains(got, "[killed]") {
		t.Errorf("stopped task: status %s, Output %q, %v", rec.Status, got, err)
	}
}
