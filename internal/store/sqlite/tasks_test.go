package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

func TestTaskConformance(t *testing.T) {
	tasktest.Run(t, func(t *testing.T) task.Store {
		return open(t, filepath.Join(t.TempDir(), "cadre.db"))
	})
}

// TestTaskMarkNotifiedTwoHandles is two cadre processes (the notifier of
// one, a blocking TaskOutput in the other) racing to announce the same
// finished tasks: exactly one call per task wins.
func TestTaskMarkNotifiedTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	tasktest.RaceMarkNotified(t, open(t, path), open(t, path))
}

// TestTaskEndsTwoHandles is two cadre processes recording different ends
// of one run at once (it completes as a stop or a sweep fails it): one
// wins, the other is refused.
func TestTaskEndsTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	tasktest.RaceEnds(t, open(t, path), open(t, path))
}

// TestTaskUpdateTwoHandles: read-modify-writes through two handles of one
// file lose nothing.
func TestTaskUpdateTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	a, b := open(t, path), open(t, path)
	tk := tasktest.Sample("shared")
	tk.ToolUses = 0
	if err := a.CreateTask(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for _, db := range []*DB{a, b} {
		wg.Go(func() {
			for range each {
				_, err := db.UpdateTask(t.Context(), "shared", func(t *task.Task) error { t.ToolUses++; return nil })
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent UpdateTask through two handles: %v", err)
		}
	}
	for name, db := range map[string]*DB{"a": a, "b": b} {
		got, err := db.GetTask(t.Context(), "shared")
		if err != nil {
			t.Fatal(err)
		}
		if got.ToolUses != 2*each {
			t.Errorf("handle %s: ToolUses = %d, want %d (an update was lost)", name, got.ToolUses, 2*each)
		}
	}
}

// TestTaskRecoverTwoHandles: two processes starting at once both run
// task.Recover on the shared database; each orphan is failed and reported
// once.
func TestTaskRecoverTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	run := filepath.Join(t.TempDir(), "run")
	a, b := open(t, path), open(t, path)
	live, err := task.ClaimOwner(run)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var orphans []string
	for i := range 30 {
		tk := tasktest.Sample(fmt.Sprintf("t%02d", i))
		tk.Owner = "1-0000000000000000" // never claimed: dead
		if i%3 == 0 {
			tk.Owner = live.ID()
		} else {
			orphans = append(orphans, tk.ID)
		}
		if err := a.CreateTask(t.Context(), tk); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	var (
		wg      sync.WaitGroup
		results [2][]task.Task
		errs    [2]error
	)
	for i, db := range []*DB{a, b} {
		wg.Go(func() { results[i], errs[i] = task.Recover(t.Context(), db, run, now) })
	}
	wg.Wait()
	var got []string
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("Recover through handle %d: %v", i, errs[i])
		}
		for _, tk := range results[i] {
			got = append(got, tk.ID)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(orphans, got); diff != "" {
		t.Errorf("tasks recovered over both handles, each once (-want +got):\n%s", diff)
	}
	failed, err := b.ListTasks(t.Context(), task.Filter{Statuses: []task.Status{task.StatusFailed}})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != len(orphans) {
		t.Errorf("%d failed tasks stored, want %d", len(failed), len(orphans))
	}
	for _, tk := range failed {
		if !tk.Finished.Equal(now) || tk.Error == "" {
			t.Errorf("%s: Finished %v, Error %q; want %v and the orphan message", tk.ID, tk.Finished, tk.Error, now)
		}
	}
}

func TestTaskPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	want := tasktest.Sample("t1")
	if err := db.CreateTask(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	want, err := db.Transition(t.Context(), "t1", func(*task.Task) (task.Event, error) {
		return task.EventComplete, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.MarkNotified(t.Context(), "t1"); err != nil || !ok {
		t.Fatalf("MarkNotified = %v, %v", ok, err)
	}
	want.Notified = true
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2 := open(t, path)
	got, err := db2.GetTask(t.Context(), "t1")
	if err != nil {
		t.Fatalf("GetTask after reopening: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
	if ok, err := db2.MarkNotified(t.Context(), "t1"); err != nil || ok {
		t.Errorf("MarkNotified after reopening = %v, %v; want false: the flag is durable", ok, err)
	}
}

// TestTaskMigrationFromSessionsOnly: a database made by a cadre that knew
// only the sessions schema gains the tasks table on Open, keeping its data.
func TestTaskMigrationFromSessionsOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	ms := mustMigrations(t)
	if len(ms) < 2 || ms[1].Name != "tasks" {
		t.Fatalf("migration 2 is %v, want tasks", ms[1:])
	}
	if err := db.CreateSession(t.Context(), info("s1")); err != nil {
		t.Fatal(err)
	}
	// Roll the file back to what version 1 left (later migrations added
	// the tasks table and the sessions' owner, cost_unknown and model
	// columns, and the task lists' tables).
	for _, stmt := range []string{`DROP TABLE task_list_items`, `DROP TABLE task_lists`, `DROP TABLE tasks`, `ALTER TABLE sessions DROP COLUMN owner`,
		`ALTER TABLE sessions DROP COLUMN cost_unknown`, `ALTER TABLE sessions DROP COLUMN model`, `DELETE FROM schema_version WHERE version > 1`} {
		if _, err := db.w.ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db = open(t, path)
	checkVersions(t, db, len(ms))
	if _, err := db.GetSession(t.Context(), "s1"); err != nil {
		t.Errorf("the session was lost by the migration: %v", err)
	}
	if err := db.CreateTask(t.Context(), tasktest.Sample("t1")); err != nil {
		t.Errorf("CreateTask after migrating: %v", err)
	}
}

func BenchmarkCreateTask(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := db.CreateTask(ctx, tasktest.Sample(fmt.Sprintf("t%08d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarkNotified(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	finished := func(id string) task.Task {
		tk := tasktest.Sample(id)
		tk.Status = task.StatusCompleted
		return tk
	}
	// first: the winning call, which flips the flag.
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			id := fmt.Sprintf("t%08d", i)
			b.StopTimer()
			if err := db.CreateTask(ctx, finished(id)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if ok, err := db.MarkNotified(ctx, id); err != nil || !ok {
				b.Fatalf("MarkNotified = %v, %v", ok, err)
			}
		}
	})
	// again: a losing call, on a task already notified.
	b.Run("again", func(b *testing.B) {
		if err := db.CreateTask(ctx, finished("done")); err != nil {
			b.Fatal(err)
		}
		if _, err := db.MarkNotified(ctx, "done"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := db.MarkNotified(ctx, "done"); err != nil || ok {
				b.Fatalf("MarkNotified = %v, %v", ok, err)
			}
		}
	})
}

// BenchmarkCreateTaskParallel is CreateTask from 64 goroutines at once, as
// a lane of 64 background children writes their records: concurrent
// writers share commits (group commit).
func BenchmarkCreateTaskParallel(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on two cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := db.CreateTask(ctx, tasktest.Sample(fmt.Sprintf("t%08d", n.Add(1)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestTaskEndClaimTwoHandles races the terminal update that claims the
// notified flag against MarkNotified from another handle, as another
// process's reader would.
func TestTaskEndClaimTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	tasktest.RaceEndClaim(t, open(t, path), open(t, path))
}

// BenchmarkListTasksNewest is the main agent's per-turn read: the ten
// newest tasks of a session that has 10,000 (S-A5's context block).
func BenchmarkListTasksNewest(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	for i := range 10_000 {
		if err := db.CreateTask(ctx, tasktest.Sample(fmt.Sprintf("t%08d", i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := db.ListTasks(ctx, task.Filter{RootSessionID: "root-1", Limit: 10})
		if err != nil || len(got) != 10 {
			b.Fatalf("ListTasks = %d tasks, %v", len(got), err)
		}
	}
}
