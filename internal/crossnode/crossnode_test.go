package crossnode

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait on an event.
const waitFor = 10 * time.Second

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// pending records a dispatched run, pending with no owner.
func pending(t *testing.T, tasks task.Store, id string) {
	t.Helper()
	rec := task.Task{ID: id, Kind: task.KindLocalAgent, Agent: "worker", Status: task.StatusPending, Created: now}
	if err := tasks.CreateTask(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// TestClaim: the first node to claim a dispatched run runs it, once; a
// run whose stop was asked for before any node started it is killed by
// the claim, and nobody runs it.
func TestClaim(t *testing.T) {
	ctx := t.Context()
	tasks := task.NewMem()
	pending(t, tasks, "t1")
	rec, ok, err := Claim(ctx, tasks, "t1", "node-a", now)
	if err != nil || !ok || rec.Owner != "node-a" || rec.Status != task.StatusRunning || !rec.Started.Equal(now) {
		t.Fatalf("first claim: %+v, %v, %v; want node-a running it", rec, ok, err)
	}
	if _, ok, err := Claim(ctx, tasks, "t1", "node-b", now); ok || err != nil {
		t.Fatalf("second claim: %v, %v; want nothing to run", ok, err)
	}

	pending(t, tasks, "t2")
	if _, err := tasks.UpdateTask(ctx, "t2", func(r *task.Task) error { r.CancelRequested = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Claim(ctx, tasks, "t2", "node-a", now); ok || err != nil {
		t.Fatalf("claim of a run stopped before it started: %v, %v; want nothing to run", ok, err)
	}
	if rec, _ := tasks.GetTask(ctx, "t2"); rec.Status != task.StatusKilled || rec.Error != "stopped before a node started it" {
		t.Errorf("a run stopped before it started is %s (%q)", rec.Status, rec.Error)
	}
}

// TestRequestStop: a run no node claimed is killed at once; a claimed one
// is asked to stop; an ended one is not running.
func TestRequestStop(t *testing.T) {
	ctx := t.Context()
	tasks := task.NewMem()
	pending(t, tasks, "unclaimed")
	if unclaimed, err := RequestStop(ctx, tasks, "unclaimed", now); !unclaimed || err != nil {
		t.Fatalf("stop of an unclaimed run: %v, %v", unclaimed, err)
	}
	if rec, _ := tasks.GetTask(ctx, "unclaimed"); rec.Status != task.StatusKilled {
		t.Errorf("unclaimed run is %s after its stop, want killed", rec.Status)
	}
	pending(t, tasks, "claimed")
	Claim(ctx, tasks, "claimed", "node-a", now)
	if unclaimed, err := RequestStop(ctx, tasks, "claimed", now); unclaimed || err != nil {
		t.Fatalf("stop of a claimed run: %v, %v", unclaimed, err)
	}
	if rec, _ := tasks.GetTask(ctx, "claimed"); rec.Status != task.StatusRunning || !rec.CancelRequested {
		t.Errorf("claimed run after its stop request: %s, asked %v; want running, asked", rec.Status, rec.CancelRequested)
	}
	_, err := RequestStop(ctx, tasks, "unclaimed", now)
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "task unclaimed is not running: it killed") {
		t.Errorf("stop of an ended run: %v", err)
	}
}

// sessions is a session index that records one update.
type sessions struct{ info session.Info }

func (s *sessions) UpdateSession(_ context.Context, _ string, fn func(*session.Info) error) error {
	return fn(&s.info)
}

// TestFailUnstarted: a run that never started fails with its session;
// one stopped meanwhile keeps its stop.
func TestFailUnstarted(t *testing.T) {
	ctx := t.Context()
	tasks := task.NewMem()
	pending(t, tasks, "t1")
	idx := &sessions{}
	if err := FailUnstarted(ctx, tasks, idx, "t1", errors.New("no model"), true, now); err != nil {
		t.Fatal(err)
	}
	rec, _ := tasks.GetTask(ctx, "t1")
	if rec.Status != task.StatusFailed || rec.Error != "no model" || !rec.Notified || idx.info.Status != session.StatusFailed {
		t.Errorf("after FailUnstarted: %s %q notified %v, session %s", rec.Status, rec.Error, rec.Notified, idx.info.Status)
	}
	pending(t, tasks, "t2")
	RequestStop(ctx, tasks, "t2", now)
	if err := FailUnstarted(ctx, tasks, &sessions{}, "t2", errors.New("late"), false, now); err != nil {
		t.Fatal(err)
	}
	if rec, _ := tasks.GetTask(ctx, "t2"); rec.Status != task.StatusKilled {
		t.Errorf("a stopped run's end was replaced: %s", rec.Status)
	}
}

// watch is a Watcher the test fires by hand.
type watch struct{ changed chan struct{} }

func (w watch) WatchTask(context.Context, string) (<-chan struct{}, func()) {
	return w.changed, func() {}
}

// TestFollow: a stand-in hears of a claimed run's progress and returns its
// end, woken by the watch (its poll is an hour away).
func TestFollow(t *testing.T) {
	ctx := t.Context()
	tasks := task.NewMem()
	pending(t, tasks, "t1")
	w := watch{make(chan struct{}, 1)}
	f := Follower{Tasks: tasks, Watch: w, Interval: time.Hour, Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
	seen := make(chan task.Task, 8)
	done := make(chan task.Task, 1)
	go func() { done <- f.Follow(ctx, "t1", func(r task.Task) { seen <- r }) }()

	Claim(ctx, tasks, "t1", "node-b", now)
	w.changed <- struct{}{}
	select {
	case r := <-seen:
		if r.Owner != "node-b" {
			t.Fatalf("progress from %q, want node-b's", r.Owner)
		}
	case <-time.After(waitFor):
		t.Fatal("the stand-in did not hear of the claimed run")
	}
	tasks.Transition(ctx, "t1", func(r *task.Task) (task.Event, error) { r.Result = "done"; return task.EventComplete, nil })
	w.changed <- struct{}{}
	select {
	case end := <-done:
		if end.Status != task.StatusCompleted || end.Result != "done" {
			t.Errorf("end %s %q, want the record's", end.Status, end.Result)
		}
	case <-time.After(waitFor):
		t.Fatal("the stand-in did not return the run's end")
	}
}

// TestFollowStops: when its group stops, a stand-in asks for the run to
// stop; a run no node claimed ends at once, killed.
func TestFollowStops(t *testing.T) {
	tasks := task.NewMem()
	pending(t, tasks, "t1")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f := Follower{Tasks: tasks, Interval: time.Millisecond, Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
	end := f.Follow(ctx, "t1", func(task.Task) {})
	if end.Status != task.StatusKilled {
		t.Fatalf("stand-in of a stopped group ended with %s, want killed", end.Status)
	}
}

// TestValidateAndCallerModel: a job from the shared store is checked
// before a node acts on it; the caller's model is built from its
// qualified name, else its bare one.
func TestValidateAndCallerModel(t *testing.T) {
	for _, j := range []Job{{TaskID: "../x", Cwd: "/w"}, {TaskID: "t1", Cwd: "/w", Depth: 3}, {TaskID: "t1", Depth: 0}, {TaskID: "t1", Cwd: "/w", Teammate: "../bob"}} {
		if err := j.Validate(3); err == nil {
			t.Errorf("job %+v passed", j)
		}
	}
	if err := (Job{TaskID: "t1", Cwd: "/w", Depth: 2, Teammate: "bob"}).Validate(3); err != nil {
		t.Errorf("a good job: %v", err)
	}
	resolve := func(name string) (llm.Model, provider.Ref, error) {
		if name == "sonnet" {
			return &llm.ModelFunc{ID: name}, provider.Ref{Model: name}, nil
		}
		return nil, provider.Ref{}, errors.New("unknown")
	}
	if m, _, err := CallerModel(resolve, "gone:sonnet"); err != nil || m.Name() != "sonnet" {
		t.Errorf("qualified name of a provider not here: %v, %v", m, err)
	}
	if _, _, err := CallerModel(resolve, "other"); err == nil || !strings.Contains(err.Error(), `cannot build the model "other"`) {
		t.Errorf("unknown model: %v", err)
	}
	if _, _, err := CallerModel(resolve, ""); err == nil {
		t.Error("no model: no error")
	}
}

// TestTakeover (S-W2): a run whose process ended is taken by the first
// process that finds its record as it was listed; one that changed since
// (taken by another, or ended) is left alone.
func TestTakeover(t *testing.T) {
	ctx := t.Context()
	tasks := task.NewMem()
	rec := task.Task{ID: "r1", Kind: task.KindRemoteAgent, Agent: "far", Status: task.StatusRunning, Owner: "gone", Created: now, Started: now, Heartbeat: now}
	if err := tasks.CreateTask(ctx, rec); err != nil {
		t.Fatal(err)
	}
	listed, _ := tasks.GetTask(ctx, "r1")
	later := now.Add(time.Minute)
	got, ok, err := Takeover(ctx, tasks, listed, "here", later)
	if err != nil || !ok || got.Owner != "here" || !got.Heartbeat.Equal(later) || got.Status != task.StatusRunning {
		t.Fatalf("takeover: %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := Takeover(ctx, tasks, listed, "other", later); ok || err != nil {
		t.Fatalf("a second takeover from the old listing: %v, %v; want left alone", ok, err)
	}
}
