package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// deadline bounds every wait of these tests.
const deadline = 10 * time.Second

// blockWriter occupies the writer goroutine with a write that waits for
// release to be called, so that the writes queued meanwhile form the next
// batch. It returns once the writer is inside that write; release returns
// the blocking write's error.
func blockWriter(t *testing.T, db *DB) (release func() error) {
	t.Helper()
	if err := db.CreateSession(t.Context(), info("blocker")); err != nil {
		t.Fatal(err)
	}
	entered, proceed := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.UpdateSession(context.Background(), "blocker", func(*session.Info) error {
			close(entered)
			<-proceed
			return nil
		})
	}()
	select {
	case <-entered:
	case <-time.After(deadline):
		t.Fatal("the blocking write never ran")
	}
	return func() error {
		close(proceed)
		return <-errc
	}
}

// whenQueued returns a channel closed once n writes wait in db's queue; set it
// before the writes start.
func whenQueued(db *DB, n int) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	db.wr.queuedHook = func(k int) {
		if k >= n {
			once.Do(func() { close(ch) })
		}
	}
	return ch
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Writes queued while a transaction runs share the next one: one commit
// for all of them, each caller told of its own write.
func TestGroupCommit(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	const n = 20
	all := whenQueued(db, n)
	release := blockWriter(t, db)
	before := db.wr.commits.Load()

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = db.CreateSession(context.Background(), info(fmt.Sprintf("s%02d", i))) })
	}
	wait(t, all, "the writes to queue")
	if err := release(); err != nil {
		t.Fatalf("blocking write: %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	// The blocking write's commit, then one for the twenty.
	if got := db.wr.commits.Load() - before; got != 2 {
		t.Errorf("%d commits for the blocking write and %d queued ones, want 2", got, n)
	}
	if got := db.Stats().Reruns; got != 0 {
		t.Errorf("%d batches ran again, with none of their writes failing", got)
	}
	list, err := db.ListSessions(t.Context(), session.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n+1 {
		t.Errorf("%d sessions stored, want %d", len(list), n+1)
	}
}

// A write that fails inside a shared transaction is undone alone; its
// neighbours commit, and a panic reaches the caller whose fn panicked.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ctx := context.Background()
	if err := db.CreateSession(ctx, info("old")); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTask(ctx, tasktest.Sample("t1")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	writes := []struct {
		name    string
		do      func() error
		wantErr string
	}{
		{"create s1", func() error { return db.CreateSession(ctx, info("s1")) }, ""},
		{"update that fails after changing the row", func() error {
			return db.UpdateSession(ctx, "old", func(s *session.Info) error { s.Title = "changed"; return boom })
		}, "boom"},
		{"duplicate id", func() error { return db.CreateSession(ctx, info("old")) }, "already exists"},
		{"joint update whose task part fails after its session part was written", func() error {
			_, err := db.UpdateSessionTask(ctx, "old", func(s *session.Info) error { s.Title = "joint"; return nil },
				"t1", func(*task.Task) error { return boom })
			return err
		}, "boom"},
		{"update that panics", func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("panicked: %v", v)
				}
			}()
			_, err = db.UpdateTask(ctx, "t1", func(tk *task.Task) error { tk.Result = "half"; panic("bad fn") })
			return err
		}, "panicked: bad fn"},
		{"invalid task", func() error {
			_, err := db.UpdateTask(ctx, "t1", func(tk *task.Task) error { tk.Status = "bogus"; return nil })
			return err
		}, "unknown status"},
		{"create s2", func() error { return db.CreateSession(ctx, info("s2")) }, ""},
	}
	all := whenQueued(db, len(writes))
	release := blockWriter(t, db)
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() { errs[i] = w.do() })
	}
	wait(t, all, "the writes to queue")
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, w := range writes {
		switch {
		case w.wantErr == "" && errs[i] != nil:
			t.Errorf("%s: %v", w.name, errs[i])
		case w.wantErr != "" && (errs[i] == nil || !strings.Contains(errs[i].Error(), w.wantErr)):
			t.Errorf("%s: err = %v, want one containing %q", w.name, errs[i], w.wantErr)
		}
	}
	for _, id := range []string{"s1", "s2"} {
		if _, err := db.GetSession(ctx, id); err != nil {
			t.Errorf("%s, written in the same transaction as failed writes: %v", id, err)
		}
	}
	if s, _ := db.GetSession(ctx, "old"); s.Title != info("old").Title {
		t.Errorf("a failed update's change was kept: title %q", s.Title)
	}
	// The writes ran without savepoints first; the first failure sent the
	// batch round again with them.
	if got := db.Stats().Reruns; got != 1 {
		t.Errorf("%d batches ran again, want 1", got)
	}
	if tk, _ := db.GetTask(ctx, "t1"); tk.Result != tasktest.Sample("t1").Result || tk.Status != tasktest.Sample("t1").Status {
		t.Errorf("a panicking or invalid update's change was kept: %+v", tk)
	}
}

// A caller that gives up while its write is still queued gets its
// context's error, and the write never happens.
func TestQueuedWriteCanceled(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	one := whenQueued(db, 1)
	release := blockWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- db.CreateSession(ctx, info("gave-up")) }()
	wait(t, one, "the write to queue")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled while queued: err = %v, want context.Canceled", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	// A write queued after it has certainly been run or skipped.
	if err := db.CreateSession(t.Context(), info("after")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetSession(t.Context(), "gave-up"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the abandoned write happened anyway (GetSession: %v)", err)
	}
}

// Close lets the writes already queued commit, then refuses new ones.
func TestCloseDrainsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	const n = 10
	all := whenQueued(db, n)
	release := blockWriter(t, db)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = db.CreateSession(context.Background(), info(fmt.Sprintf("s%02d", i))) })
	}
	wait(t, all, "the writes to queue")
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d, queued before Close: %v", i, err)
		}
	}
	if err := db.CreateSession(t.Context(), info("late")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a write after Close: err = %v, want one saying the database is closed", err)
	}
	db2 := open(t, path)
	list, err := db2.ListSessions(t.Context(), session.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n+1 {
		t.Errorf("%d sessions after reopening, want %d", len(list), n+1)
	}
}

// The hot statements are prepared once and then reused, by the writer
// and by the readers.
func TestStatementsPrepared(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ctx := t.Context()
	for i := range 3 {
		id := fmt.Sprintf("s%d", i)
		if err := db.CreateSession(ctx, info(id)); err != nil {
			t.Fatal(err)
		}
		if err := db.UpdateSession(ctx, id, func(s *session.Info) error { s.NumTurns++; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.GetSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cache *stmtCache
		query string
	}{
		{db.ws, insertSessionSQL}, {db.ws, `UPDATE sessions SET num_turns = ? WHERE id = ?`},
		{db.ws, rowCheckSQL}, {db.ws, totalChangesSQL}, {db.rs, selectSessionSQL},
	} {
		if c.cache.lookup(c.query) == nil {
			t.Errorf("not cached: %.40s...", c.query)
		}
	}
}

// After checkpointEvery committed writes the checkpointer copies the WAL
// back, on its own goroutine; fewer make none.
func TestCheckpointer(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	if err := db.CreateSession(t.Context(), info("s1")); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	c := newCheckpointer(db.ckp, func(err error) { ran <- err })
	defer c.close()
	c.written(checkpointEvery - 1)
	select {
	case <-ran:
		t.Fatal("a checkpoint ran before checkpointEvery writes")
	default:
	}
	c.written(1)
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("no checkpoint after checkpointEvery writes")
	}
}
