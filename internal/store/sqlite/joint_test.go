package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/llm"
)

// TestJointWrites: a session's and a task's records written together are
// one commit, and both or neither: the half that fails takes the other
// with it.
func TestJointWrites(t *testing.T) {
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	rec := task.Task{ID: "s1", Kind: task.KindLocalAgent, Status: task.StatusRunning, ChildSessionID: "s1"}

	before := db.Stats()
	if err := db.CreateSessionTask(ctx, info("s1"), rec); err != nil {
		t.Fatal(err)
	}
	if got := db.Stats(); got.Commits-before.Commits != 1 || got.Writes-before.Writes != 1 {
		t.Errorf("CreateSessionTask: %+v → %+v, want one write in one commit", before, got)
	}
	if _, err := db.GetSession(ctx, "s1"); err != nil {
		t.Error(err)
	}
	if _, err := db.GetTask(ctx, "s1"); err != nil {
		t.Error(err)
	}

	// The task's id is taken: the new session is not recorded either.
	if err := db.CreateSessionTask(ctx, info("s2"), rec); err == nil {
		t.Fatal("a second task s1 was created")
	}
	if _, err := db.GetSession(ctx, "s2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session of a failed joint create was recorded (err %v)", err)
	}

	ended := func(in *session.Info) error { in.Status = session.StatusCompleted; return nil }
	done := func(t *task.Task) (task.Event, error) { t.Result = "ok"; return task.EventComplete, nil }
	before = db.Stats()
	got, err := db.TransitionSessionTask(ctx, "s1", ended, "s1", done)
	if err != nil || got.Status != task.StatusCompleted || got.Result != "ok" {
		t.Fatalf("TransitionSessionTask = %+v, %v", got, err)
	}
	if after := db.Stats(); after.Commits-before.Commits != 1 {
		t.Errorf("TransitionSessionTask: %d commits, want 1", after.Commits-before.Commits)
	}
	if s, _ := db.GetSession(ctx, "s1"); s.Status != session.StatusCompleted {
		t.Errorf("session after the joint update: %s", s.Status)
	}

	// The task's update fails: the session's is undone.
	boom := errors.New("boom")
	failed := func(in *session.Info) error { in.Status = session.StatusFailed; return nil }
	if _, err := db.TransitionSessionTask(ctx, "s1", failed, "s1", func(*task.Task) (task.Event, error) { return task.EventFail, boom }); !errors.Is(err, boom) {
		t.Fatalf("TransitionSessionTask err = %v, want boom", err)
	}
	if s, _ := db.GetSession(ctx, "s1"); s.Status != session.StatusCompleted {
		t.Errorf("a failed joint update changed the session to %s", s.Status)
	}
	// The task's event is refused (it completed already): the same.
	if _, err := db.TransitionSessionTask(ctx, "s1", failed, "s1", done); !errors.Is(err, task.ErrTransition) {
		t.Fatalf("TransitionSessionTask completing a completed task: err = %v, want ErrTransition", err)
	}
	if s, _ := db.GetSession(ctx, "s1"); s.Status != session.StatusCompleted {
		t.Errorf("a refused joint transition changed the session to %s", s.Status)
	}
	if _, err := db.TransitionSessionTask(ctx, "s1", failed, "nope", done); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("joint update of a missing task: %v", err)
	}
}

// TestCloseLeavesTheWAL: closing makes no checkpoint (SQLite's last
// connection would: two fsyncs on every exit), so what was written waits
// in the WAL; the next Open reads it all and counts it towards its
// checkpointer's next checkpoint.
func TestCloseLeavesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		if err := db.CreateSession(t.Context(), info(fmt.Sprintf("s%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the WAL after Close: %v, %v", fi, err)
	}
	db = open(t, path)
	if got := db.walBacklog(t.Context()); got < n {
		t.Errorf("walBacklog after %d writes and Close = %d frames, want them still in the WAL", n, got)
	}
	list, err := db.ListSessions(t.Context(), session.Filter{})
	if err != nil || len(list) != n {
		t.Errorf("after reopening: %d sessions (%v), want %d", len(list), err, n)
	}
	// A checkpoint copies them back; the backlog is gone.
	if _, err := db.ckp.ExecContext(t.Context(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		t.Fatal(err)
	}
	if got := db.walBacklog(t.Context()); got != 0 {
		t.Errorf("walBacklog after a checkpoint = %d, want 0", got)
	}
}

// BenchmarkChildLifecycle is the store's share of a background child,
// from 64 goroutines at once as a lane of 64 writes it: its session and
// task recorded (pending), the task started, then both ended in one
// write — three writes, group-committed with the other children's. One
// op is one child; pages/op is how many pages the writer wrote to the
// WAL for it, which is most of what a commit costs.
func BenchmarkChildLifecycle(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	var n atomic.Int64
	base := time.UnixMilli(1_780_000_000_000).UTC()
	before, pages := db.Stats(), pagesWritten(b, db)
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on two cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprintf("c%08d", i)
			s := info(id)
			s.Usage, s.CostUSD, s.NumTurns = llm.Usage{}, llm.Cost{}, 0
			tk := tasktest.Sample(id)
			tk.Status, tk.Result, tk.Progress, tk.Usage, tk.CostUSD, tk.ToolUses = task.StatusPending, "", "", llm.Usage{}, llm.Cost{}, 0
			tk.Heartbeat, tk.Started, tk.CancelRequested = time.Time{}, time.Time{}, false
			if err := db.CreateSessionTask(ctx, s, tk); err != nil {
				b.Error(err)
				return
			}
			started := base.Add(time.Duration(i) * time.Millisecond)
			_, err := db.Transition(ctx, id, func(t *task.Task) (task.Event, error) {
				t.Started = started
				return task.EventStart, nil
			})
			if err != nil {
				b.Error(err)
				return
			}
			ended := started.Add(time.Second)
			usage := llm.Usage{InputTokens: 1000 + i, OutputTokens: 100}
			_, err = db.TransitionSessionTask(ctx, id, func(s *session.Info) error {
				s.Status, s.Updated, s.Usage, s.CostUSD, s.NumTurns = session.StatusCompleted, ended, usage, llm.USD(0.01), 1
				return nil
			}, id, func(t *task.Task) (task.Event, error) {
				t.Result, t.Usage, t.CostUSD, t.ToolUses = "done: part "+id, usage, llm.USD(0.01), 1
				t.Finished, t.Notified = ended, true
				return task.EventComplete, nil
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	after := db.Stats()
	b.ReportMetric(float64(after.Commits-before.Commits)/float64(b.N), "commits/op")
	b.ReportMetric(float64(pagesWritten(b, db)-pages)/float64(b.N), "pages/op")
}

// pagesWritten is how many pages the writer's connection has written
// (SQLITE_DBSTATUS_CACHE_WRITE: to the WAL) since it opened; it waits for
// the writer to be idle.
func pagesWritten(tb testing.TB, db *DB) int {
	tb.Helper()
	c, err := db.w.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	var n int
	err = c.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) reports no status", dc)
		}
		n, _, err = st.Status(sqlite.DBStatusCacheWrite, false)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
