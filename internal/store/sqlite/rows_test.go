package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/llm"
)

// seenTask returns an update fn that records the row it was given in
// *seen and then applies change.
func seenTask(seen *task.Task, change func(*task.Task)) func(*task.Task) error {
	return func(tk *task.Task) error {
		*seen = *tk
		change(tk)
		return nil
	}
}

func seenSession(seen *session.Info, change func(*session.Info)) func(*session.Info) error {
	return func(s *session.Info) error {
		*seen = *s
		change(s)
		return nil
	}
}

// stored are a task's and a session's rows as the readers' pool reads
// them.
type stored struct {
	task    task.Task
	session session.Info
}

func storedRows(t *testing.T, db *DB, id string) stored {
	t.Helper()
	tk, err := db.GetTask(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return stored{tk, s}
}

// mustBeGiven fails unless an update's fns were given the rows stored
// before it (s nil: a task's update alone).
func mustBeGiven(t *testing.T, want stored, what string, tk task.Task, s *session.Info) {
	t.Helper()
	// Tell +0 from -0 apart.
	opt := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	if diff := cmp.Diff(want.task, tk, timeEqual, opt); diff != "" {
		t.Errorf("%s: the update was given another task than stored (-stored +given):\n%s", what, diff)
	}
	if s != nil {
		if diff := cmp.Diff(want.session, *s, timeEqual, opt); diff != "" {
			t.Errorf("%s: the update was given another session than stored (-stored +given):\n%s", what, diff)
		}
	}
}

// The rows the writer created or updated are not read back by the next
// update, which is given them exactly as a read would give them: times
// cut to the millisecond, a negative zero cost positive, the notified
// flag MarkNotified set.
func TestUpdatesUseRememberedRows(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ctx := t.Context()
	if err := db.CreateSessionTask(ctx, info("c1"), tasktest.Sample("c1")); err != nil {
		t.Fatal(err)
	}
	before := db.Stats()
	var (
		seen  task.Task
		seenS session.Info
	)
	at := time.Date(2026, 11, 27, 15, 0, 0, 123_456_789, time.FixedZone("X", 3600))

	want := storedRows(t, db, "c1")
	if _, err := db.UpdateTask(ctx, "c1", seenTask(&seen, func(tk *task.Task) {
		tk.Status, tk.Started, tk.CostUSD = task.StatusRunning, at, llm.USD(math.Copysign(0, -1))
	})); err != nil {
		t.Fatal(err)
	}
	mustBeGiven(t, want, "after the create", seen, nil)

	want = storedRows(t, db, "c1")
	_, err := db.TransitionSessionTask(ctx, "c1", seenSession(&seenS, func(s *session.Info) {
		s.Status, s.Updated, s.CostUSD = session.StatusCompleted, at, llm.USD(math.Copysign(0, -1))
	}), "c1", event(task.EventComplete, seenTask(&seen, func(tk *task.Task) {
		tk.Finished = at
	})))
	if err != nil {
		t.Fatal(err)
	}
	mustBeGiven(t, want, "after an update", seen, &seenS)

	if won, err := db.MarkNotified(ctx, "c1"); err != nil || !won {
		t.Fatalf("MarkNotified = %v, %v", won, err)
	}
	want = storedRows(t, db, "c1")
	_, err = db.UpdateSessionTask(ctx, "c1", seenSession(&seenS, func(*session.Info) {}),
		"c1", seenTask(&seen, func(*task.Task) {}))
	if err != nil {
		t.Fatal(err)
	}
	mustBeGiven(t, want, "after MarkNotified and a joint update", seen, &seenS)
	taskCost, _ := seen.CostUSD.USD()
	sessionCost, _ := seenS.CostUSD.USD()
	if !seen.Notified || math.Signbit(taskCost) || math.Signbit(sessionCost) {
		t.Errorf("given notified=%v, costs %v and %v; want true, +0, +0", seen.Notified, seen.CostUSD, seenS.CostUSD)
	}

	if got := db.Stats().Reads - before.Reads; got != 0 {
		t.Errorf("%d rows read back, want none", got)
	}
}

// Another handle's write — another process — makes the writer forget
// what it remembers: the next update reads the row it changed.
func TestRememberedRowsForgottenOnOthersWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	a, b := open(t, path), open(t, path)
	ctx := t.Context()
	if err := a.CreateSessionTask(ctx, info("c1"), tasktest.Sample("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateTask(ctx, "c1", func(tk *task.Task) error { tk.Result = "from b"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.UpdateSession(ctx, "c1", func(s *session.Info) error { s.Title = "from b"; return nil }); err != nil {
		t.Fatal(err)
	}

	before := a.Stats()
	var (
		seen  task.Task
		seenS session.Info
	)
	_, err := a.UpdateSessionTask(ctx, "c1", seenSession(&seenS, func(*session.Info) {}), "c1", seenTask(&seen, func(*task.Task) {}))
	if err != nil {
		t.Fatal(err)
	}
	if seen.Result != "from b" || seenS.Title != "from b" {
		t.Errorf("after another handle's updates, given result %q and title %q; want both %q", seen.Result, seenS.Title, "from b")
	}
	if got := a.Stats().Reads - before.Reads; got != 2 {
		t.Errorf("%d rows read back, want 2", got)
	}
	// Read once, they are remembered again.
	if _, err := a.UpdateTask(ctx, "c1", seenTask(&seen, func(*task.Task) {})); err != nil {
		t.Fatal(err)
	}
	if got := a.Stats().Reads - before.Reads; got != 2 {
		t.Errorf("%d rows read back in all, want still 2", got)
	}
}

// A write that fails leaves nothing of itself remembered, alone in its
// transaction or sharing it: the session it updated before its task's
// fn failed is given to the next update as stored, unchanged.
func TestFailedWritesLeaveNothingRemembered(t *testing.T) {
	boom := errors.New("boom")
	failing := func(db *DB, id string) error {
		_, err := db.UpdateSessionTask(context.Background(), id,
			func(s *session.Info) error { s.Title = "undone"; return nil },
			id, func(tk *task.Task) error { tk.Result = "undone"; return boom })
		if !errors.Is(err, boom) {
			return fmt.Errorf("the failing update: %v", err)
		}
		return nil
	}
	check := func(t *testing.T, db *DB, id string) {
		t.Helper()
		var (
			seen  task.Task
			seenS session.Info
		)
		want := storedRows(t, db, id)
		_, err := db.UpdateSessionTask(t.Context(), id, seenSession(&seenS, func(*session.Info) {}), id, seenTask(&seen, func(*task.Task) {}))
		if err != nil {
			t.Fatal(err)
		}
		mustBeGiven(t, want, "after a failed write", seen, &seenS)
		if seen.Result == "undone" || seenS.Title == "undone" {
			t.Errorf("given a failed write's rows: result %q, title %q", seen.Result, seenS.Title)
		}
	}

	t.Run("alone", func(t *testing.T) {
		db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
		if err := db.CreateSessionTask(t.Context(), info("c1"), tasktest.Sample("c1")); err != nil {
			t.Fatal(err)
		}
		if err := failing(db, "c1"); err != nil {
			t.Fatal(err)
		}
		check(t, db, "c1")
	})
	t.Run("in a batch", func(t *testing.T) {
		db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
		for _, id := range []string{"c1", "c2"} {
			if err := db.CreateSessionTask(t.Context(), info(id), tasktest.Sample(id)); err != nil {
				t.Fatal(err)
			}
		}
		all := whenQueued(db, 2)
		release := blockWriter(t, db)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		wg.Go(func() { errs[0] = failing(db, "c1") })
		wg.Go(func() {
			_, errs[1] = db.UpdateTask(context.Background(), "c2", func(tk *task.Task) error { tk.Result = "kept"; return nil })
		})
		wait(t, all, "the writes to queue")
		if err := release(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		check(t, db, "c1")
		var seen task.Task
		if _, err := db.UpdateTask(t.Context(), "c2", seenTask(&seen, func(*task.Task) {})); err != nil {
			t.Fatal(err)
		}
		if seen.Result != "kept" {
			t.Errorf("the write beside the failed one: given result %q, want %q", seen.Result, "kept")
		}
	})
}

// rowSet: a write's rows over its transaction's over the committed ones;
// a nil row is unknown; a write's rows go with it, a transaction's are
// committed only with it, and at most maxRememberedRows are kept.
func TestRowSet(t *testing.T) {
	s := newRowSet(func(*int) int { return 1 })
	get := func(id string) any {
		if v, ok := s.get(id); ok {
			return v
		}
		return "unknown"
	}
	s.put("a", 1)
	s.endWrite(true)
	s.put("a", 2)
	s.put("b", 2)
	if get("a") != 2 || get("b") != 2 {
		t.Errorf("within a write: a=%v b=%v, want 2 2", get("a"), get("b"))
	}
	s.endWrite(false)
	if get("a") != 1 || get("b") != "unknown" {
		t.Errorf("after a failed write: a=%v b=%v, want 1, unknown", get("a"), get("b"))
	}
	s.commit()
	s.unknown("a")
	if get("a") != "unknown" {
		t.Errorf("marked unknown: a=%v", get("a"))
	}
	s.endWrite(true)
	s.commit()
	if get("a") != "unknown" {
		t.Errorf("committed as unknown: a=%v", get("a"))
	}
	for i := range maxRememberedRows + 10 {
		s.put(fmt.Sprint(i), i)
	}
	s.endWrite(true)
	s.commit()
	if n := len(s.committed); n != maxRememberedRows || s.bytes != n {
		t.Errorf("%d rows of %d bytes remembered, want %d", n, s.bytes, maxRememberedRows)
	}
	// Rows are also forgotten past maxRememberedBytes.
	s.forget()
	big := newRowSet(func(r *string) int { return len(*r) })
	row := string(make([]byte, maxRememberedBytes/4+1))
	for i := range 8 {
		big.put(fmt.Sprint(i), row)
	}
	big.endWrite(true)
	big.commit()
	if n := len(big.committed); n != 3 || big.bytes != 3*len(row) {
		t.Errorf("%d rows of %d bytes remembered, want 3 of %d", n, big.bytes, 3*len(row))
	}
	s.forget()
	if get("1") != "unknown" || len(s.committed) != 0 {
		t.Errorf("forget kept rows")
	}
}

// event makes fn a transition's fn that causes ev.
func event(ev task.Event, fn func(*task.Task) error) func(*task.Task) (task.Event, error) {
	return func(tk *task.Task) (task.Event, error) { return ev, fn(tk) }
}
