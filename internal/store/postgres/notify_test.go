package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/queue/queuetest"
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

// TestTaskTriggerHearsPlainSQL: the trigger announces a task's changes
// made by a writer that knows nothing of notifications (plain SQL on a
// connection of its own) with "<id> <status>", then " stop" while the
// record asks for a stop; an insert, which no watcher waits for, and an
// update of the heartbeat alone are not announced.
func TestTaskTriggerHearsPlainSQL(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	ctx := t.Context()
	listen, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close(context.Background())
	if _, err := listen.Exec(ctx, "LISTEN "+taskChannel); err != nil {
		t.Fatal(err)
	}
	writer, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())

	next := func() string {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		n, err := listen.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return n.Payload
	}
	tk := tasktest.Sample("t1")
	tk.Status, tk.CancelRequested = task.StatusRunning, false
	if err := db.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE tasks SET heartbeat_ms = heartbeat_ms + 1000 WHERE id = 't1'`,
		`UPDATE tasks SET cancel_requested = true WHERE id = 't1'`,
		`UPDATE tasks SET status = 'killed' WHERE id = 't1'`,
	} {
		if _, err := writer.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// Notifications arrive in commit order: had the insert or the
	// heartbeat been announced, it would come first.
	if got := next(); got != "t1 running stop" {
		t.Errorf("after setting cancel_requested: %q, want %q (neither the insert nor the heartbeat alone may be announced)", got, "t1 running stop")
	}
	if got := next(); got != "t1 killed stop" {
		t.Errorf("after the status change: %q, want %q", got, "t1 killed stop")
	}
}

// TestTaskTriggerListsEveryColumn: the trigger's condition compares every
// column of tasks but heartbeat_ms, so a column added later is announced
// when it changes only once it is added to the condition (migration 0011).
func TestTaskTriggerListsEveryColumn(t *testing.T) {
	db := open(t, pg.URL(t))
	ctx := t.Context()
	var def string
	if err := db.pool.QueryRow(ctx, `SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'tasks_notify'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	rows, err := db.pool.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_name = 'tasks' AND table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(columns) < 10 {
		t.Fatalf("tasks has %d columns: %v", len(columns), columns)
	}
	for _, c := range columns {
		// The server keeps a row comparison as one comparison a column.
		listed := strings.Contains(def, "(old."+c+" IS DISTINCT FROM new."+c+")")
		if want := c != "heartbeat_ms"; listed != want {
			t.Errorf("%s compared in the trigger's condition: %v, want %v", c, listed, want)
		}
	}
	if t.Failed() {
		t.Log(def)
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
