package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// pendingChild is a background child's two records as its launch creates
// them: its session running, its task waiting for a lane place.
func pendingChild(id string) (session.Info, task.Task) {
	tk := tasktest.Sample(id)
	tk.Status, tk.Started, tk.Result, tk.Progress, tk.CancelRequested = task.StatusPending, time.Time{}, "", "", false
	return info(id), tk
}

// start and end are a child's two record updates on the hot path: its
// task's running transition (records.Writer.Started), then its end,
// session and task at once, claiming the notification
// (records.Writer.End).
func start(db *DB, t *testing.T, id string) (task.Task, error) {
	return db.Transition(t.Context(), id, func(rec *task.Task) (task.Event, error) {
		rec.Started = time.Now()
		return task.EventStart, nil
	})
}

func end(db *DB, t *testing.T, id string) (task.Task, error) {
	return db.TransitionSessionTask(t.Context(), id, func(s *session.Info) error {
		s.Status, s.NumTurns = session.StatusCompleted, s.NumTurns+1
		return nil
	}, id, func(rec *task.Task) (task.Event, error) {
		rec.Result, rec.Finished, rec.ToolUses, rec.Notified = "done", time.Now(), rec.ToolUses+1, true
		return task.EventComplete, nil
	})
}

// TestChildUpdatesOneRoundTrip: once a DB has created a child's records,
// its running transition, its end and a plain update each take one round
// trip (one statement), where a read-modify-write takes two.
func TestChildUpdatesOneRoundTrip(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	ctx := t.Context()
	for i := range 3 {
		id := fmt.Sprintf("c%d", i)
		s, tk := pendingChild(id)
		if err := db.CreateSessionTask(ctx, s, tk); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			do   func() error
		}{
			{"running transition", func() error { _, err := start(db, t, id); return err }},
			{"plain task update", func() error {
				_, err := db.UpdateTask(ctx, id, func(rec *task.Task) error { rec.Progress = "half"; return nil })
				return err
			}},
			{"session update", func() error {
				return db.UpdateSession(ctx, id, func(s *session.Info) error { s.Title = "renamed"; return nil })
			}},
			{"end (session and task)", func() error { _, err := end(db, t, id); return err }},
		} {
			proxy.count()
			if err := c.do(); err != nil {
				t.Fatalf("child %s: %s: %v", id, c.name, err)
			}
			// The first child prepares each statement on its connection.
			if n := proxy.count(); i > 0 && n != 1 {
				t.Errorf("child %s: %s took %d round trips, want 1", id, c.name, n)
			}
		}
		got, err := db.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != task.StatusCompleted || got.Result != "done" || got.Progress != "half" || !got.Notified || got.ToolUses != tk.ToolUses+1 {
			t.Errorf("child %s's task as stored: %s %q %q notified=%v tool uses %d", id, got.Status, got.Result, got.Progress, got.Notified, got.ToolUses)
		}
		gs, err := db.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if gs.Status != session.StatusCompleted || gs.Title != "renamed" || gs.NumTurns != 1 {
			t.Errorf("child %s's session as stored: %s %q turns %d", id, gs.Status, gs.Title, gs.NumTurns)
		}
	}
}

// TestKnownRowIsTheStoredRow: what a DB remembers of a row it created or
// updated is what a read of the row gives (what fn sees is the same on
// either path), and ended records are not kept.
func TestKnownRowIsTheStoredRow(t *testing.T) {
	url := pg.URL(t)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	s, tk := pendingChild("k1")
	s.Created = time.Now() // finer than the milliseconds stored
	tk.Created = time.Now()
	if err := a.CreateSessionTask(ctx, s, tk); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		kt, _, ok := a.tasks.get("k1")
		gt, err := b.GetTask(ctx, "k1")
		if !ok || err != nil {
			t.Fatalf("%s: the task remembered: %v; read: %v", when, ok, err)
		}
		if diff := cmp.Diff(gt, kt); diff != "" {
			t.Errorf("%s: the task remembered differs from the stored row (-stored +remembered):\n%s", when, diff)
		}
		ks, _, ok := a.sessions.get("k1")
		gs, err := b.GetSession(ctx, "k1")
		if !ok || err != nil {
			t.Fatalf("%s: the session remembered: %v; read: %v", when, ok, err)
		}
		if diff := cmp.Diff(gs, ks); diff != "" {
			t.Errorf("%s: the session remembered differs from the stored row (-stored +remembered):\n%s", when, diff)
		}
	}
	check("created")
	if _, err := a.Transition(ctx, "k1", func(rec *task.Task) (task.Event, error) {
		rec.Started, rec.Heartbeat, rec.Model = time.Now(), time.Now(), "not stored"
		return task.EventStart, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.UpdateSession(ctx, "k1", func(s *session.Info) error { s.Updated = time.Now(); return nil }); err != nil {
		t.Fatal(err)
	}
	check("updated")
	if _, err := end(a, t, "k1"); err != nil {
		t.Fatal(err)
	}
	if a.tasks.len() != 0 || a.sessions.len() != 0 {
		t.Errorf("after the end %d tasks and %d sessions are remembered, want none", a.tasks.len(), a.sessions.len())
	}
}

// TestStaleKnownRowFallsBack: another handle (another node) changes a row
// between two updates of the first handle, which remembers the row as it
// wrote it: the first handle's next update must not be judged on, or
// written over, the stale copy — nothing of either writer's is lost, and
// an event the row as stored refuses is refused.
func TestStaleKnownRowFallsBack(t *testing.T) {
	url := pg.URL(t)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	bumpTask := func(db *DB, id string) {
		t.Helper()
		if _, err := db.UpdateTask(ctx, id, func(rec *task.Task) error { rec.ToolUses += 10; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	bumpSession := func(db *DB, id string) {
		t.Helper()
		if err := db.UpdateSession(ctx, id, func(s *session.Info) error { s.Usage.InputTokens += 10; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []struct {
		name string
		// between changes the rows through b after a's running
		// transition.
		between func(id string)
		// wantErr is the error a's end must meet, if any.
		wantErr error
		// tools and input are the task's tool uses and the
		// session's input tokens added after the create.
		tools  int
		input  int64
		status task.Status
	}{
		{"nothing", func(string) {}, nil, 1, 0, task.StatusCompleted},
		{"the task", func(id string) { bumpTask(b, id) }, nil, 11, 0, task.StatusCompleted},
		{"the session", func(id string) { bumpSession(b, id) }, nil, 1, 10, task.StatusCompleted},
		{"both", func(id string) { bumpTask(b, id); bumpSession(b, id) }, nil, 11, 10, task.StatusCompleted},
		{"the task's notified flag", func(id string) {
			// Its end was recorded elsewhere (a sweep): MarkNotified
			// then flips the flag in a statement of its own.
			if _, err := b.Transition(ctx, id, func(*task.Task) (task.Event, error) { return task.EventFail, nil }); err != nil {
				t.Fatal(err)
			}
			if won, err := b.MarkNotified(ctx, id); !won || err != nil {
				t.Fatalf("MarkNotified: %v, %v", won, err)
			}
		}, task.ErrTransition, 0, 0, task.StatusFailed},
		{"a stop", func(id string) {
			if _, err := b.Transition(ctx, id, func(*task.Task) (task.Event, error) { return task.EventStop, nil }); err != nil {
				t.Fatal(err)
			}
		}, task.ErrTransition, 0, 0, task.StatusKilled},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprint("stale-", i)
			s, tk := pendingChild(id)
			if err := a.CreateSessionTask(ctx, s, tk); err != nil {
				t.Fatal(err)
			}
			if _, err := start(a, t, id); err != nil {
				t.Fatal(err)
			}
			c.between(id)
			_, err := end(a, t, id)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("a's end: %v, want %v", err, c.wantErr)
			}
			gt, err := b.GetTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := b.GetSession(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if gt.Status != c.status || gt.ToolUses != tk.ToolUses+c.tools {
				t.Errorf("the task: %s with %d tool uses, want %s with %d", gt.Status, gt.ToolUses, c.status, tk.ToolUses+c.tools)
			}
			// The end's session half is stored once, or not at all
			// when the task's half is refused.
			wantSession, wantTurns := session.StatusCompleted, 1
			if c.wantErr != nil {
				wantSession, wantTurns = session.StatusRunning, 0
			}
			if gs.Status != wantSession || gs.NumTurns != wantTurns || gs.Usage.InputTokens != s.Usage.InputTokens+c.input {
				t.Errorf("the session: %s after %d turns with %d input tokens, want %s after %d with %d",
					gs.Status, gs.NumTurns, gs.Usage.InputTokens, wantSession, wantTurns, s.Usage.InputTokens+c.input)
			}
		})
	}

	// A plain update on a stale copy: b's change is kept beside a's.
	s, tk := pendingChild("plain")
	if err := a.CreateSessionTask(ctx, s, tk); err != nil {
		t.Fatal(err)
	}
	bumpTask(b, "plain")
	bumpTask(a, "plain")
	bumpSession(b, "plain")
	bumpSession(a, "plain")
	if gt, _ := b.GetTask(ctx, "plain"); gt.ToolUses != tk.ToolUses+20 {
		t.Errorf("after an update through each handle the task has %d tool uses, want %d", gt.ToolUses, tk.ToolUses+20)
	}
	if gs, _ := b.GetSession(ctx, "plain"); gs.Usage.InputTokens != s.Usage.InputTokens+20 {
		t.Errorf("after an update through each handle the session has %d input tokens, want %d", gs.Usage.InputTokens, s.Usage.InputTokens+20)
	}
}

// TestKnownIsBounded: past its bounds in rows or bytes, the rows used
// least recently are forgotten; a row not worth keeping is not kept.
func TestKnownIsBounded(t *testing.T) {
	k := newKnownTasks()
	k.maxRows, k.maxBytes = 3, 1<<20
	for i := range 5 {
		k.put(fmt.Sprint(i), tasktest.Sample(fmt.Sprint(i)), uint32(i))
	}
	k.get("2") // used: kept over 3
	k.put("5", tasktest.Sample("5"), 5)
	for id, want := range map[string]bool{"0": false, "1": false, "2": true, "3": false, "4": true, "5": true} {
		if _, _, ok := k.get(id); ok != want {
			t.Errorf("row %s remembered: %v, want %v", id, ok, want)
		}
	}
	done := tasktest.Sample("4")
	done.Status = task.StatusCompleted
	k.put("4", done, 6)
	if _, _, ok := k.get("4"); ok {
		t.Error("a completed task's row is remembered")
	}

	k = newKnownTasks()
	big := tasktest.Sample("big")
	big.Result = string(make([]byte, 1000))
	k.maxRows, k.maxBytes = 100, 2*k.size(&big)+10
	for i := range 3 {
		k.put(fmt.Sprint(i), big, 1)
	}
	if k.len() != 2 || k.bytes > k.maxBytes {
		t.Errorf("%d rows of %d bytes remembered, want 2 within %d", k.len(), k.bytes, k.maxBytes)
	}
}

// TestKnownUpdateAnswerLost: an update of a remembered row whose answer
// the connection lost, after the server had it, is retried as the same
// conditional statement, never as a read-modify-write that would apply it
// again: the row holds the update at most once, and when no retry can
// tell whether it was stored, the error says so (ambiguous).
func TestKnownUpdateAnswerLost(t *testing.T) {
	for _, c := range []struct {
		name string
		// other ends the other writer's transaction, which held the
		// row while the update waited for it.
		other func(tx pgx.Tx) error
		// tools is how many times the update may be in the row, and
		// progress what the other writer left.
		tools    int
		progress string
	}{
		// The waiting update runs once the lock is released: its
		// backend commits it though its client has gone.
		{"released", func(tx pgx.Tx) error { return tx.Rollback(t.Context()) }, 1, ""},
		// The row changed before the waiting update could run: it
		// matches nothing, nor does the retry.
		{"changed", func(tx pgx.Tx) error {
			if _, err := tx.Exec(t.Context(), `UPDATE tasks SET progress = 'other' WHERE id = 'lost'`); err != nil {
				return err
			}
			return tx.Commit(t.Context())
		}, 0, "other"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := pg.URL(t)
			proxy, cutURL := newProxy(t, url)
			a, b := open(t, cutURL), open(t, url)
			ctx := t.Context()
			_, tk := pendingChild("lost")
			tk.Progress = ""
			if err := a.CreateTask(ctx, tk); err != nil {
				t.Fatal(err)
			}
			tx, err := b.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			if _, err := tx.Exec(ctx, `SELECT FROM tasks WHERE id = 'lost' FOR UPDATE`); err != nil {
				t.Fatal(err)
			}
			var (
				wg   sync.WaitGroup
				uErr error
			)
			wg.Go(func() {
				_, uErr = a.UpdateTask(ctx, "lost", func(rec *task.Task) error { rec.ToolUses++; return nil })
			})
			defer wg.Wait()
			// The update has reached the server and waits for the row.
			deadline := time.Now().Add(time.Minute)
			for {
				var waiting int
				if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE tasks SET%'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the update did not reach the server within a minute")
				}
				runtime.Gosched()
			}
			proxy.cut()
			proxy.awaitRefused(t, 1) // the update is being retried
			if err := c.other(tx); err != nil {
				t.Fatal(err)
			}
			proxy.mend()
			wg.Wait()
			var amb ambiguous
			if uErr != nil && !errors.As(uErr, &amb) {
				t.Fatalf("the update: %v, want success or an unknown outcome", uErr)
			}
			if c.tools == 0 && uErr == nil {
				t.Error("the update succeeded though the row changed before it could run")
			}
			got, err := b.GetTask(ctx, "lost")
			if err != nil {
				t.Fatal(err)
			}
			if got.ToolUses != tk.ToolUses+c.tools || got.Progress != c.progress {
				t.Errorf("the row has %d tool uses and progress %q, want %d and %q (update err: %v)",
					got.ToolUses, got.Progress, tk.ToolUses+c.tools, c.progress, uErr)
			}
		})
	}
}
