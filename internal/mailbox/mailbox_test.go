package mailbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait on an event.
const waitFor = 10 * time.Second

// counting is a Mailbox that counts the Takes that reach it.
type counting struct {
	queue.Mailbox
	mu    sync.Mutex
	takes int
}

func (c *counting) Take(ctx context.Context, id string) ([]queue.Entry, error) {
	c.mu.Lock()
	c.takes++
	c.mu.Unlock()
	return c.Mailbox.Take(ctx, id)
}

func (c *counting) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.takes
}

func entry(target, text string) queue.Entry {
	return queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: target, Message: llm.UserText(text)}
}

// TestInboxTakesOnlyAfterAnArrival: a run's loop boundaries cost a round
// trip to the store only when a push may have arrived since the last take,
// or an earlier run left messages: a new agent's first boundary takes
// nothing.
func TestInboxTakesOnlyAfterAnArrival(t *testing.T) {
	ctx := t.Context()
	mb := &counting{}
	in := Open(ctx, mb, "a1", "p1", slog.New(slog.DiscardHandler))
	if es := in.Take(ctx); len(es) != 0 || mb.count() != 0 {
		t.Fatalf("first take of a new inbox: %d entries, %d takes; want 0, 0", len(es), mb.count())
	}
	if es := in.Take(ctx); len(es) != 0 || mb.count() != 0 {
		t.Fatalf("take with nothing arrived: %d entries, %d takes; want 0, 0", len(es), mb.count())
	}
	if ok, err := mb.Push(ctx, entry("a1", "hi")); !ok || err != nil {
		t.Fatalf("push to an open inbox: %v, %v", ok, err)
	}
	select {
	case <-in.Arrived():
		in.Noted()
	case <-time.After(waitFor):
		t.Fatal("no arrival after a push")
	}
	if es := in.Take(ctx); len(es) != 1 || mb.count() != 1 {
		t.Fatalf("take after an arrival: %d entries, %d takes; want 1, 1", len(es), mb.count())
	}
	if es := in.Close(ctx, true); len(es) != 0 {
		t.Fatalf("close of an empty inbox returned %d entries", len(es))
	}
	if ok, _ := mb.Push(ctx, entry("a1", "late")); ok {
		t.Error("a push to a closed inbox was queued")
	}
}

// TestInboxTakesWhatAnEarlierRunLeft: a run reopening an inbox with
// messages left in it takes them at its first boundary, before any push.
func TestInboxTakesWhatAnEarlierRunLeft(t *testing.T) {
	ctx := t.Context()
	mb := &counting{}
	first := Open(ctx, mb, "a1", "p1", slog.New(slog.DiscardHandler))
	if ok, err := mb.Push(ctx, entry("a1", "left over")); !ok || err != nil {
		t.Fatalf("push to an open inbox: %v, %v", ok, err)
	}
	first.stop() // the run ended without closing, as a killed process does
	in := Open(ctx, mb, "a1", "p2", slog.New(slog.DiscardHandler))
	defer in.Close(ctx, false)
	if es := in.Take(ctx); len(es) != 1 || mb.count() != 1 {
		t.Fatalf("first take of a reopened inbox: %d entries, %d takes; want 1, 1", len(es), mb.count())
	}
}

// TestInboxClose: a run that answers keeps its inbox open while something
// waits and gets it back; one that failed drops it and closes.
func TestInboxClose(t *testing.T) {
	ctx := t.Context()
	mb := &queue.Mailbox{}
	in := Open(ctx, mb, "a1", "p1", slog.New(slog.DiscardHandler))
	mb.Push(ctx, entry("a1", "one"))
	if es := in.Close(ctx, true); len(es) != 1 {
		t.Fatalf("close with a message waiting, answering: %d entries, want 1", len(es))
	}
	if ok, _ := mb.Push(ctx, entry("a1", "two")); !ok {
		t.Fatal("the inbox closed with a message waiting for the run to answer")
	}
	if es := in.Close(ctx, false); len(es) != 0 {
		t.Fatalf("close not answering returned %d entries", len(es))
	}
	if ok, _ := mb.Push(ctx, entry("a1", "three")); ok {
		t.Error("a push after a close that dropped what waited was queued")
	}
}

// TestNilInbox: without a Mailbox a run has no inbox, and its calls do
// nothing.
func TestNilInbox(t *testing.T) {
	in := Open(t.Context(), nil, "a1", "p1", slog.New(slog.DiscardHandler))
	if in != nil || in.Take(t.Context()) != nil || in.Close(t.Context(), true) != nil || in.Arrived() != nil {
		t.Fatal("a nil inbox did something")
	}
}

// records is a task store's records by id, changed by the test.
type records struct {
	mu   sync.Mutex
	recs map[string]task.Task
}

func (r *records) GetTask(_ context.Context, id string) (task.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.recs[id]
	if !ok {
		return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
	}
	return rec, nil
}

func (r *records) set(rec task.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs[rec.ID] = rec
}

// watch is a TaskWatcher the test fires by hand; watching says a watch began.
type watch struct {
	watching chan string
	changed  chan struct{}
}

func (w *watch) WatchTask(_ context.Context, id string) (<-chan struct{}, func()) {
	w.watching <- id
	return w.changed, func() {}
}

// TestCourierSendElsewhere: a message for an agent whose record names
// another process goes to its inbox; one running here, or nowhere, is not
// queued for (its sender resumes it); one whose run closed its inbox but
// has not recorded its end is waited for until the record ends.
func TestCourierSendElsewhere(t *testing.T) {
	ctx := t.Context()
	mb := &queue.Mailbox{}
	recs := &records{recs: map[string]task.Task{}}
	w := &watch{watching: make(chan string, 1), changed: make(chan struct{}, 1)}
	c := Courier{Tasks: recs, Mailbox: mb, Watch: w, Interval: time.Hour, Owner: "here"}

	recs.set(task.Task{ID: "there", Status: task.StatusRunning, Owner: "other"})
	mb.Open(ctx, "there", "other")
	recs.set(task.Task{ID: "local", Status: task.StatusRunning, Owner: "here"})
	recs.set(task.Task{ID: "ended", Status: task.StatusCompleted, Owner: "other"})
	for _, tc := range []struct {
		target string
		queued bool
	}{{"there", true}, {"local", false}, {"ended", false}, {"unknown", false}} {
		queued, err := c.SendElsewhere(ctx, entry(tc.target, "hi"))
		if err != nil || queued != tc.queued {
			t.Errorf("send to %s: queued %v, %v; want %v, nil", tc.target, queued, err, tc.queued)
		}
	}

	recs.set(task.Task{ID: "closing", Status: task.StatusRunning, Owner: "other"})
	done := make(chan error, 1)
	go func() {
		queued, err := c.SendElsewhere(ctx, entry("closing", "hi"))
		if queued {
			err = errors.Join(err, errors.New("queued for a closed inbox"))
		}
		done <- err
	}()
	select {
	case <-w.watching:
	case <-time.After(waitFor):
		t.Fatal("the send did not wait for the run's end")
	}
	select {
	case err := <-done:
		t.Fatalf("the send returned (%v) before the run's end was recorded", err)
	default:
	}
	recs.set(task.Task{ID: "closing", Status: task.StatusCompleted, Owner: "other"})
	w.changed <- struct{}{}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitFor):
		t.Fatal("the send did not return once the run's end was recorded")
	}
}

// TestSubscribe: an inbox the store opens with the run's record is not
// opened by Subscribe (a push before that write is refused), takes nothing
// until a push arrives, and then takes it.
func TestSubscribe(t *testing.T) {
	ctx := t.Context()
	if in := Subscribe(ctx, nil, "a1", slog.New(slog.DiscardHandler)); in != nil || in.OpensWithRecord() {
		t.Fatal("Subscribe without a Mailbox gave an inbox")
	}
	mb := &counting{}
	in := Subscribe(ctx, mb, "a1", slog.New(slog.DiscardHandler))
	defer in.Close(ctx, false)
	if !in.OpensWithRecord() {
		t.Error("a subscribed inbox does not say the record's write opens it")
	}
	if ok, _ := mb.Push(ctx, entry("a1", "too early")); ok {
		t.Fatal("Subscribe opened the inbox")
	}
	if _, err := mb.Open(ctx, "a1", "p1"); err != nil { // the record's write
		t.Fatal(err)
	}
	if es := in.Take(ctx); len(es) != 0 || mb.count() != 0 {
		t.Fatalf("take before any push: %d entries, %d takes; want 0, 0", len(es), mb.count())
	}
	if ok, err := mb.Push(ctx, entry("a1", "hi")); !ok || err != nil {
		t.Fatalf("push once the record's write opened it: %v, %v", ok, err)
	}
	select {
	case <-in.Arrived():
		in.Noted()
	case <-time.After(waitFor):
		t.Fatal("no arrival after a push")
	}
	if es := in.Take(ctx); len(es) != 1 || mb.count() != 1 {
		t.Fatalf("take after an arrival: %d entries, %d takes; want 1, 1", len(es), mb.count())
	}
	a2 := Open(ctx, mb, "a2", "p1", slog.New(slog.DiscardHandler))
	defer a2.Close(ctx, false)
	if a2.OpensWithRecord() {
		t.Error("an inbox Open opened says the record's write opens it")
	}
}
