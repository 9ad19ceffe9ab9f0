package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/queue/queuetest"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/llm"
)

// waitLimit bounds every wait for a notification: only a defect reaches it.
const waitLimit = 30 * time.Second

// Each handle is a DB of its own (its own pool and listener) on one
// database: a process of its own, as far as the server can tell.
func TestMailboxConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) func() queuetest.Mailbox {
		url := pg.URL(t)
		return func() queuetest.Mailbox { return open(t, url).Mailbox() }
	})
}

// woken waits for ch to receive, failing t at the deadline.
func woken(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not woken within %s", what, waitLimit)
	}
}

// TestTaskTriggerHearsPlainSQL: the trigger announces the changes made by
// a writer that knows nothing of notifications (plain SQL on a connection
// of its own) with "<id> <status>", then " stop" while the record asks for
// a stop: every change of whether a record asks for a stop, and every
// other change of a watched record (WatchTask marks it) but a heartbeat
// alone. An insert, and the other changes of a record nobody watches, are
// not announced (migration 0012).
func TestTaskTriggerHearsPlainSQL(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	ctx := t.Context()
	next := listenTasks(t, url)
	writer, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())

	for _, id := range []string{"quiet", "watched"} {
		tk := tasktest.Sample(id)
		tk.Status, tk.CancelRequested = task.StatusRunning, false
		if err := db.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	_, stop := db.WatchTask(ctx, "watched")
	defer stop()
	for _, stmt := range []string{
		`UPDATE tasks SET progress = 'half way' WHERE id = 'quiet'`,
		`UPDATE tasks SET heartbeat_ms = heartbeat_ms + 1000 WHERE id = 'watched'`,
		`UPDATE tasks SET cancel_requested = true WHERE id = 'quiet'`,
		`UPDATE tasks SET status = 'killed' WHERE id = 'quiet'`,
		`UPDATE tasks SET status = 'killed' WHERE id = 'watched'`,
	} {
		if _, err := writer.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// Notifications arrive in commit order: had the inserts, the mark,
	// the unwatched change or the heartbeat been announced, it would
	// come first; had the unwatched record's end been, it would come
	// second.
	for _, want := range []string{"quiet running stop", "watched killed"} {
		if got := next(want); got != want {
			t.Errorf("notification %q, want %q", got, want)
		}
	}
}

// TestTaskTriggerComparesEveryColumn: on a watched record, a change of
// any column but heartbeat_ms (and the mark, watched) is announced, the
// columns added by later migrations too, without anyone listing them
// (migration 0012); a change of the heartbeat alone is not.
func TestTaskTriggerComparesEveryColumn(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	ctx := t.Context()
	tk := tasktest.Sample("w")
	tk.Status, tk.CancelRequested = task.StatusRunning, false
	if err := db.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	_, stop := db.WatchTask(ctx, "w")
	defer stop()
	next := listenTasks(t, url)
	rows, err := db.pool.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_name = 'tasks' AND table_schema = current_schema() ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ name, kind string }
	columns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c column, err error) {
		return c, r.Scan(&c.name, &c.kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(columns) < 30 {
		t.Fatalf("tasks has %d columns: %v", len(columns), columns)
	}
	for _, c := range columns {
		var change string
		switch {
		case c.name == "id" || c.name == "watched":
			continue
		case c.kind == "text":
			change = fmt.Sprintf("%[1]s = COALESCE(%[1]s, '') || 'x'", c.name)
		case c.kind == "boolean":
			change = fmt.Sprintf("%[1]s = NOT %[1]s", c.name)
		default:
			change = fmt.Sprintf("%[1]s = COALESCE(%[1]s, 0) + 1", c.name)
		}
		if _, err := db.pool.Exec(ctx, `UPDATE tasks SET `+change+` WHERE id = 'w'`); err != nil {
			t.Fatalf("%s: %v", change, err)
		}
		if c.name == "heartbeat_ms" {
			continue // the next change's notification must come first
		}
		if got := next(c.name); !strings.HasPrefix(got, "w ") {
			t.Errorf("after changing %s: notification %q, want one of w", c.name, got)
		}
	}
}

// TestWatchStopHearsOnlyStops: WatchStop wakes for a change that asks for
// a stop, not for the run's own changes; WatchTask, which wakes for every
// change, tells when a change has been dispatched to both.
func TestWatchStopHearsOnlyStops(t *testing.T) {
	db := open(t, pg.URL(t))
	ctx := t.Context()
	tk := tasktest.Sample("t1")
	tk.Status, tk.CancelRequested = task.StatusRunning, false
	if err := db.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	all, stopAll := db.WatchTask(ctx, "t1")
	defer stopAll()
	asked, stopAsked := db.WatchStop(ctx, "t1")
	defer stopAsked()
	// The first connection wakes both.
	woken(t, all, "the task watch, at the first connection")
	woken(t, asked, "the stop watch, at the first connection")
	for _, fn := range []func(*task.Task) error{
		func(t *task.Task) error { t.Progress = "half way"; return nil },
		func(t *task.Task) error { t.ToolUses = 7; return nil },
	} {
		if _, err := db.UpdateTask(ctx, "t1", fn); err != nil {
			t.Fatal(err)
		}
		woken(t, all, "the task watch, at a change")
		select {
		case <-asked:
			t.Fatal("the stop watch woke for a change that asks for no stop")
		default:
		}
	}
	if _, err := db.UpdateTask(ctx, "t1", func(t *task.Task) error { t.CancelRequested = true; return nil }); err != nil {
		t.Fatal(err)
	}
	woken(t, asked, "the stop watch, at the stop asked for")
}

// TestListenerSurvivesATerminatedBackend: when the server ends the
// listener's connection, every subscriber is woken once it listens again
// (what was notified in between is lost, so they must read their state),
// and later notifications still arrive.
func TestListenerSurvivesATerminatedBackend(t *testing.T) {
	url := pg.URL(t)
	db, other := open(t, url), open(t, url)
	ctx := t.Context()
	tk := tasktest.Sample("t1")
	tk.Status, tk.CancelRequested = task.StatusRunning, false
	if err := db.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Mailbox().Open(ctx, "a1", "o"); err != nil {
		t.Fatal(err)
	}
	watch, stopWatch := db.WatchTask(ctx, "t1")
	defer stopWatch()
	arrived, stopArrived := db.Mailbox().Arrived(ctx, "a1")
	defer stopArrived()
	// The first connection wakes both too.
	woken(t, watch, "the task watch, at the first connection")
	woken(t, arrived, "the mailbox waiter, at the first connection")

	var killed int
	err := other.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, ListenerName).Scan(&killed)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listener backends, want 1", killed)
	}
	woken(t, watch, "the task watch, after the reconnect")
	woken(t, arrived, "the mailbox waiter, after the reconnect")
	if n := db.listen.connections(); n != 2 {
		t.Errorf("the listener connected %d times, want 2", n)
	}

	if _, err := other.UpdateTask(ctx, "t1", func(rec *task.Task) error { rec.CancelRequested = true; return nil }); err != nil {
		t.Fatal(err)
	}
	woken(t, watch, "the task watch, by a change after the reconnect")
	if ok, err := other.Mailbox().Push(ctx, msgFor("a1")); !ok || err != nil {
		t.Fatalf("push: %v, %v", ok, err)
	}
	woken(t, arrived, "the mailbox waiter, by a push after the reconnect")
}

// TestWatchAfterClose: a DB closed stops its listener (goleak, in
// TestMain, checks that its goroutine ended); a watch asked of it after
// that never fires and its stop is harmless.
func TestWatchAfterClose(t *testing.T) {
	db := open(t, pg.URL(t))
	watch, stop := db.WatchTask(t.Context(), "t1")
	woken(t, watch, "the first connection")
	stop()
	db.Close()
	late, stop := db.WatchTask(t.Context(), "t1")
	stop()
	select {
	case <-late:
		t.Error("a watch on a closed DB fired")
	default:
	}
	if !strings.Contains(ListenerName, "cadre") {
		t.Errorf("ListenerName %q does not say it is cadre's", ListenerName)
	}
}

func msgFor(agent string) queue.Entry {
	return queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: agent, Message: llm.UserText("hello")}
}

// TestWatchedOnAnOlderDatabase: a database migrated up to 0011, with a
// running task in it, takes migration 0012 on the next open: the record is
// unwatched, so its progress is not announced, but a stop request is; once
// WatchTask marks it, its other changes are.
func TestWatchedOnAnOlderDatabase(t *testing.T) {
	url := pg.URL(t)
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	steps := mustLoad(t, migrationFiles)
	if len(steps) < 12 || steps[11].Version != 12 {
		t.Fatalf("migration 0012 is not the twelfth step: %d steps", len(steps))
	}
	old := &DB{pool: pool, log: slog.New(slog.DiscardHandler)}
	if err := old.migrate(ctx, steps[:11]); err != nil {
		t.Fatal(err)
	}
	tk := tasktest.Sample("t1")
	tk.Status, tk.CancelRequested = task.StatusRunning, false
	if _, err := pool.Exec(ctx, insertTaskSQL, append([]any{tk.ID}, tablerow.TaskValues(tk)...)...); err != nil {
		t.Fatal(err)
	}

	db := open(t, url) // migrates to the newest
	var watched bool
	if err := pool.QueryRow(ctx, `SELECT watched FROM tasks WHERE id = 't1'`).Scan(&watched); err != nil {
		t.Fatal(err)
	}
	if watched {
		t.Error("a record written before 0012 is watched")
	}
	next := listenTasks(t, url)
	exec := func(stmt string) {
		t.Helper()
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(`UPDATE tasks SET progress = 'half way' WHERE id = 't1'`)
	exec(`UPDATE tasks SET cancel_requested = true WHERE id = 't1'`)
	// In commit order: the progress, unwatched, would have come first.
	if got := next("the stop request"); got != "t1 running stop" {
		t.Errorf("after the stop request: %q, want %q", got, "t1 running stop")
	}
	_, stop := db.WatchTask(ctx, "t1")
	defer stop()
	exec(`UPDATE tasks SET status = 'killed' WHERE id = 't1'`)
	if got := next("the end of a watched record"); got != "t1 killed stop" {
		t.Errorf("after the end of a watched record: %q, want %q", got, "t1 killed stop")
	}
}

// listenTasks LISTENs on the task channel on a connection of its own to
// url; next returns the payload of the next notification, failing the
// test (saying what it waited for) after waitLimit.
func listenTasks(t *testing.T, url string) (next func(what string) string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), "LISTEN "+taskChannel); err != nil {
		t.Fatal(err)
	}
	return func(what string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
		defer cancel()
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("%s: no notification: %v", what, err)
		}
		return n.Payload
	}
}
