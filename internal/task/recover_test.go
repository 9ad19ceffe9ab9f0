package task_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

var now = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

func record(id, owner string, kind task.Kind, status task.Status) task.Task {
	tk := tasktest.Sample(id)
	tk.Owner, tk.Kind, tk.Status = owner, kind, status
	return tk
}

func remoteRecord(id, owner, remoteID string) task.Task {
	tk := record(id, owner, task.KindRemoteAgent, task.StatusRunning)
	tk.RemoteTaskID = remoteID
	return tk
}

func TestRecover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	live := claim(t, dir)
	closed := claim(t, dir)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	const unknown = "777-0000000000000000"

	type want int
	const (
		kept want = iota
		failed
	)
	cases := []struct {
		tk   task.Task
		want want
	}{
		{record("live-running", live.ID(), task.KindLocalAgent, task.StatusRunning), kept},
		{record("live-pending", live.ID(), task.KindLocalBash, task.StatusPending), kept},
		{record("closed-running", closed.ID(), task.KindLocalAgent, task.StatusRunning), failed},
		{record("closed-pending", closed.ID(), task.KindLocalAgent, task.StatusPending), failed},
		{record("closed-bash", closed.ID(), task.KindLocalBash, task.StatusRunning), failed},
		{record("unknown-running", unknown, task.KindLocalAgent, task.StatusRunning), failed},
		{record("no-owner", "", task.KindLocalAgent, task.StatusPending), failed},
		{record("traversal-owner", "../x", task.KindLocalAgent, task.StatusRunning), failed},
		{record("closed-completed", closed.ID(), task.KindLocalAgent, task.StatusCompleted), kept},
		{record("closed-killed", closed.ID(), task.KindLocalAgent, task.StatusKilled), kept},
		{record("unknown-timeout", unknown, task.KindLocalAgent, task.StatusTimeout), kept},
		{record("unknown-failed", unknown, task.KindLocalAgent, task.StatusFailed), kept},
		// A remote run with its remote task id recorded is followed again
		// later (S-W2); one the server never named a task for cannot be.
		{remoteRecord("remote-running", unknown, "a2a-task-1"), kept},
		{remoteRecord("remote-live", live.ID(), ""), kept},
		{remoteRecord("remote-unnamed", unknown, ""), failed},
		{remoteRecord("remote-no-owner", "", ""), failed},
	}
	s := task.NewMem()
	for _, c := range cases {
		if err := s.CreateTask(t.Context(), c.tk); err != nil {
			t.Fatal(err)
		}
	}

	changed, err := task.Recover(t.Context(), s, dir, now)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	var wantChanged, gotChanged []string
	for _, c := range cases {
		want := c.tk
		if c.want == failed {
			wantChanged = append(wantChanged, c.tk.ID)
			want.Status = task.StatusFailed
			want.Finished = now
			switch want.Owner {
			case "":
				want.Error = "the cadre process that ran this task (no owner recorded) ended before it finished"
			default:
				want.Error = fmt.Sprintf("the cadre process that ran this task (owner %s) ended before it finished", want.Owner)
			}
		}
		got, err := s.GetTask(t.Context(), c.tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after Recover (-want +got):\n%s", c.tk.ID, diff)
		}
	}
	for _, tk := range changed {
		gotChanged = append(gotChanged, tk.ID)
		stored, _ := s.GetTask(t.Context(), tk.ID)
		if diff := cmp.Diff(stored, tk); diff != "" {
			t.Errorf("Recover returned %s unlike the stored record (-stored +returned):\n%s", tk.ID, diff)
		}
	}
	slices.Sort(wantChanged)
	slices.Sort(gotChanged)
	if diff := cmp.Diff(wantChanged, gotChanged); diff != "" {
		t.Errorf("tasks Recover reports changed (-want +got):\n%s", diff)
	}

	again, err := task.Recover(t.Context(), s, dir, now.Add(time.Hour))
	if err != nil || len(again) != 0 {
		t.Errorf("second Recover = %d tasks, %v; want none", len(again), err)
	}
}

// TestRecoverConcurrent: several processes starting at once each run
// Recover; every orphaned task is failed once and reported by exactly one.
func TestRecoverConcurrent(t *testing.T) {
	dir := t.TempDir()
	s := task.NewMem()
	const n = 40
	for i := range n {
		if err := s.CreateTask(t.Context(), record(fmt.Sprintf("t%02d", i), "1-dead", task.KindLocalAgent, task.StatusRunning)); err != nil {
			t.Fatal(err)
		}
	}
	const workers = 4
	// Every Recover lists the tasks before any updates one: the worst case.
	var listed sync.WaitGroup
	listed.Add(workers)
	barrier := listBarrier{Mem: s, listed: &listed}
	results := make([][]task.Task, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { results[w], errs[w] = task.Recover(t.Context(), barrier, dir, now) })
	}
	wg.Wait()
	seen := map[string]int{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("Recover %d: %v", w, errs[w])
		}
		for _, tk := range results[w] {
			seen[tk.ID]++
		}
	}
	if len(seen) != n {
		t.Errorf("%d tasks reported recovered, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s reported by %d Recover calls, want 1", id, c)
		}
	}
}

// listBarrier holds every ListTasks until listed's count is reached.
type listBarrier struct {
	*task.Mem
	listed *sync.WaitGroup
}

func (b listBarrier) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	list, err := b.Mem.ListTasks(ctx, f)
	b.listed.Done()
	b.listed.Wait()
	return list, err
}

// failingStore fails UpdateTask for one id.
type failingStore struct {
	*task.Mem
	failID string
}

func (f failingStore) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	if id == f.failID {
		return task.Task{}, fmt.Errorf("update task %q: disk on fire", id)
	}
	return f.Mem.UpdateTask(ctx, id, fn)
}

func (f failingStore) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	if id == f.failID {
		return task.Task{}, fmt.Errorf("update task %q: disk on fire", id)
	}
	return f.Mem.Transition(ctx, id, fn)
}

func TestRecoverErrors(t *testing.T) {
	dir := t.TempDir()
	s := failingStore{Mem: task.NewMem(), failID: "t2"}
	for _, id := range []string{"t1", "t2", "t3"} {
		if err := s.CreateTask(t.Context(), record(id, "1-dead", task.KindLocalAgent, task.StatusRunning)); err != nil {
			t.Fatal(err)
		}
	}
	changed, err := task.Recover(t.Context(), s, dir, now)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "recover tasks") {
		t.Errorf("Recover err = %v, want the failed update's error", err)
	}
	var ids []string
	for _, tk := range changed {
		ids = append(ids, tk.ID)
	}
	if diff := cmp.Diff([]string{"t3", "t1"}, ids); diff != "" {
		t.Errorf("one failed update should not stop the others (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := task.Recover(ctx, task.NewMem(), dir, now); !errors.Is(err, context.Canceled) {
		t.Errorf("Recover with a canceled context: err = %v, want context.Canceled", err)
	}
}

// refreshing is a store in which the executor of every listed task
// refreshes its heartbeat right after the listing, as a live one would
// between a sweeper's list and its update.
type refreshing struct{ task.Store }

func (r refreshing) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	ts, err := r.Store.ListTasks(ctx, f)
	for _, t := range ts {
		r.Store.UpdateTask(ctx, t.ID, func(t *task.Task) error { t.Heartbeat = t.Heartbeat.Add(time.Second); return nil })
	}
	return ts, err
}

// TestSweepRechecks: Sweep fails what its judge calls gone, with the
// judge's reason, but re-checks inside the update: a task whose heartbeat
// moved since it was listed, or that the judge no longer calls gone, is
// left running.
func TestSweepRechecks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refresh bool
		second  bool // the judge's answer inside the update
		failed  bool
	}{
		{"gone", false, true, true},
		{"heartbeat refreshed", true, true, false},
		{"judged alive again", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s task.Store = task.NewMem()
			if err := s.CreateTask(t.Context(), record("t1", "n1", task.KindLocalAgent, task.StatusRunning)); err != nil {
				t.Fatal(err)
			}
			if tc.refresh {
				s = refreshing{s}
			}
			calls := 0
			judge := func(task.Task) (string, bool) {
				calls++
				return "executor lost: test", calls == 1 || tc.second
			}
			changed, err := task.Sweep(t.Context(), s, judge, now)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetTask(t.Context(), "t1")
			if failed := got.Status == task.StatusFailed; failed != tc.failed || len(changed) != map[bool]int{true: 1}[tc.failed] {
				t.Fatalf("status %s, changed %d; want failed: %v", got.Status, len(changed), tc.failed)
			}
			if tc.failed && (got.Error != "executor lost: test" || !got.Finished.Equal(now)) {
				t.Errorf("error %q finished %v", got.Error, got.Finished)
			}
		})
	}
}
