package cluster

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
)

const orphanAfter = 10 * time.Minute

// silence backdates node id's last heartbeat by d, as if it had been
// silent that long.
func silence(t *testing.T, db *postgres.DB, id string, d time.Duration) {
	t.Helper()
	tag, err := db.Pool().Exec(t.Context(), `UPDATE nodes SET heartbeat_at = now() - make_interval(secs => $2) WHERE id = $1`, id, d.Seconds())
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("silence node %s: %v (%d rows)", id, err, tag.RowsAffected())
	}
}

func register(t *testing.T, db *postgres.DB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := db.RegisterNode(t.Context(), id, "host-"+id, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// running is a running task of owner, with its child session, created
// and last heartbeating age ago.
func running(t *testing.T, db *postgres.DB, id, owner string, kind task.Kind, status task.Status, age time.Duration) {
	t.Helper()
	tk := tasktest.Sample(id)
	tk.Owner, tk.Kind, tk.Status = owner, kind, status
	tk.Created, tk.Started, tk.Heartbeat = time.Now().Add(-age), time.Now().Add(-age), time.Now().Add(-age)
	if err := db.CreateTask(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	sessionOf(t, db, id, owner)
}

func sessionOf(t *testing.T, db *postgres.DB, id, owner string) {
	t.Helper()
	err := db.CreateSession(t.Context(), session.Info{
		ID: id, Status: session.StatusRunning, Owner: owner, Created: time.Now(), Updated: time.Now(), TranscriptPath: "/s/" + id + ".jsonl",
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweep: the tasks of a silent node, of a node that left, and of an
// owner with no node record whose own heartbeat is old fail, once, with
// the reason; so do their sessions. Everything of a live node, of a young
// owner with no record, remote tasks and finished tasks stay as they are.
func TestSweep(t *testing.T) {
	db := pgstore.Open(t, pg.URL(t))
	register(t, db, "live", "silent", "left", "quiet", "crashed")
	silence(t, db, "silent", 20*time.Minute)
	silence(t, db, "quiet", 5*time.Minute) // silent, but not for long enough
	if err := db.LeaveNode(t.Context(), "left"); err != nil {
		t.Fatal(err)
	}
	old := 20 * time.Minute
	cases := []struct {
		id, owner string
		kind      task.Kind
		status    task.Status
		age       time.Duration
		reason    string // a regexp; "" for kept
		// sessionFails: the task's child session fails, because its
		// task did or because its owner is gone.
		sessionFails bool
	}{
		{"silent-running", "silent", task.KindLocalAgent, task.StatusRunning, old, `^executor lost: node silent sent no heartbeat for 1[12]\d\d seconds$`, true},
		{"silent-pending", "silent", task.KindLocalBash, task.StatusPending, 0, `^executor lost: node silent sent no heartbeat for 1[12]\d\d seconds$`, true},
		// A remote run whose remote task id is recorded is followed again
		// by a later cadre (S-W2); one the server never named a task for
		// cannot be, and fails.
		{"silent-remote-named", "silent", task.KindRemoteAgent, task.StatusRunning, old, "", true},
		{"silent-remote", "silent", task.KindRemoteAgent, task.StatusRunning, old, `^executor lost: node silent sent no heartbeat for 1[12]\d\d seconds$`, true},
		{"silent-done", "silent", task.KindLocalAgent, task.StatusCompleted, old, "", true},
		{"left-running", "left", task.KindLocalAgent, task.StatusRunning, 0, `^executor lost: node left shut down at \S+ before the task finished$`, true},
		{"crashed-running", "crashed", task.KindLocalAgent, task.StatusRunning, 0, `^executor lost: node crashed ended before the task finished$`, true},
		{"live-running", "live", task.KindLocalAgent, task.StatusRunning, old, "", false},
		{"quiet-running", "quiet", task.KindLocalAgent, task.StatusRunning, old, "", false},
		{"norecord-old", "gone", task.KindLocalAgent, task.StatusRunning, old, `^executor lost: node gone sent no heartbeat for 1[12]\d\d seconds$`, true},
		{"norecord-young", "young", task.KindLocalAgent, task.StatusRunning, time.Minute, "", false},
		{"no-owner-old", "", task.KindLocalBash, task.StatusPending, old, `^executor lost: a node that recorded no id sent no heartbeat`, true},
		// A dispatched run waiting in the queue: no node owns it yet.
		{"queued-old", "", task.KindLocalAgent, task.StatusPending, old, "", false},
	}
	for _, c := range cases {
		running(t, db, c.id, c.owner, c.kind, c.status, c.age)
		if strings.HasSuffix(c.id, "-named") {
			if _, err := db.UpdateTask(t.Context(), c.id, func(tk *task.Task) error { tk.RemoteTaskID = "a2a-" + c.id; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Sessions of a node that is gone fail with it, whatever their task
	// (silent-remote's, silent-done's) and if they have none (a main
	// session).
	sessionOf(t, db, "main-silent", "silent")
	sessionOf(t, db, "main-live", "live")
	sessionOf(t, db, "main-norecord", "young")

	// "crashed" heartbeated a moment ago, but the runtime knows it ended
	// (its lock in this CADRE_HOME is free); that answer is kept, since
	// asking may remove the lock file it judged by.
	asked := map[string]int{}
	ended := func(owner string) bool { asked[owner]++; return owner == "crashed" }
	swept, err := Sweep(t.Context(), db, orphanAfter, ended)
	if err != nil {
		t.Fatal(err)
	}
	if asked["crashed"] != 1 {
		t.Errorf("ended asked %d times about the crashed owner, want once", asked["crashed"])
	}
	var gotFailed, wantFailed []string
	for _, tk := range swept.Tasks {
		gotFailed = append(gotFailed, tk.ID)
	}
	wantSessions := []string{"main-silent"}
	for _, c := range cases {
		got, err := db.GetTask(t.Context(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := db.GetSession(t.Context(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		wantSession := session.StatusRunning
		if c.sessionFails {
			wantSession = session.StatusFailed
			wantSessions = append(wantSessions, c.id)
		}
		if s.Status != wantSession {
			t.Errorf("%s: its session is %s, want %s", c.id, s.Status, wantSession)
		}
		if c.reason == "" {
			if got.Status != c.status {
				t.Errorf("%s: task %s (%s), want it left alone", c.id, got.Status, got.Error)
			}
			continue
		}
		wantFailed = append(wantFailed, c.id)
		if got.Status != task.StatusFailed || !regexp.MustCompile(c.reason).MatchString(got.Error) || got.Finished.IsZero() {
			t.Errorf("%s: status %s, error %q, finished %v; want failed matching %s", c.id, got.Status, got.Error, got.Finished, c.reason)
		}
	}
	slices.Sort(gotFailed)
	slices.Sort(wantFailed)
	if !slices.Equal(gotFailed, wantFailed) {
		t.Errorf("Sweep reported tasks %v, want %v", gotFailed, wantFailed)
	}
	slices.Sort(swept.Sessions)
	slices.Sort(wantSessions)
	if !slices.Equal(swept.Sessions, wantSessions) {
		t.Errorf("Sweep reported sessions %v, want %v", swept.Sessions, wantSessions)
	}
	for _, id := range []string{"main-live", "main-norecord"} {
		if s, _ := db.GetSession(t.Context(), id); s.Status != session.StatusRunning {
			t.Errorf("session %s is %s, want running", id, s.Status)
		}
	}

	// Once: a second sweep finds nothing more to do.
	again, err := Sweep(t.Context(), db, orphanAfter, nil)
	if err != nil || len(again.Tasks) != 0 || len(again.Sessions) != 0 {
		t.Errorf("second sweep: %+v, %v; want nothing", again, err)
	}
}

// TestSweepersRace: sweepers on two nodes at once, with the database
// between them, fail each lost task exactly once between them.
func TestSweepersRace(t *testing.T) {
	url := pg.URL(t)
	a, b := pgstore.Open(t, url), pgstore.Open(t, url)
	register(t, a, "dead")
	silence(t, a, "dead", time.Hour)
	const n = 40
	for i := range n {
		running(t, a, fmt.Sprintf("t%02d", i), "dead", task.KindLocalAgent, task.StatusRunning, time.Hour)
	}
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for _, db := range []*postgres.DB{a, b, a, b} {
		wg.Go(func() {
			swept, err := Sweep(t.Context(), db, orphanAfter, nil)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, tk := range swept.Tasks {
				got = append(got, tk.ID)
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	if len(got) != n || len(slices.Compact(slices.Clone(got))) != n {
		t.Errorf("the sweepers reported %d failures (%d distinct), want each of the %d tasks once: %v", len(got), len(slices.Compact(slices.Clone(got))), n, got)
	}
}

// eventually polls cond until it holds or the deadline passes: waiting on
// the store's state, with a deadline, not a sleep.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting: %s", what)
		case <-tick.C:
		}
	}
}

// TestNodeHeartbeatsAndLeaves: a started node records itself, stamps its
// heartbeat as it goes, and on Close records that it left, and leaves no
// goroutine behind (River's, the heartbeat's).
func TestNodeHeartbeatsAndLeaves(t *testing.T) {
	db := pgstore.Open(t, pg.URL(t))
	before := goleak.IgnoreCurrent()
	cfg := config(db, "beating")
	cfg.Heartbeat, cfg.OrphanAfter, cfg.Host, cfg.PID = 50*time.Millisecond, time.Second, "host-x", 4242
	n, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	node := func() postgres.Node {
		_, nodes, err := db.Nodes(t.Context(), []string{"beating"})
		if err != nil {
			t.Fatal(err)
		}
		return nodes["beating"]
	}
	var first postgres.Node
	eventually(t, "the node's record", func() bool { first = node(); return first.ID != "" })
	if first.Host != "host-x" || first.PID != 4242 || !first.Left.IsZero() {
		t.Errorf("record %+v", first)
	}
	eventually(t, "a heartbeat after the first", func() bool { return node().Heartbeat.After(first.Heartbeat) })
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if left := node(); left.Left.IsZero() {
		t.Errorf("after Close the record says the node has not left: %+v", left)
	}
	goleak.VerifyNone(t, before)
}

// TestPeriodicSweep: the leader enqueues the sweep periodically and a
// node works it: a task of a node that went silent after several sweeps
// had run is failed without anyone calling Sweep, and the live node's own
// task is not.
func TestPeriodicSweep(t *testing.T) {
	db := pgstore.Open(t, pg.URL(t))
	running(t, db, "mine", "sweeper", task.KindLocalAgent, task.StatusRunning, 0)
	cfg := config(db, "sweeper")
	cfg.Heartbeat, cfg.OrphanAfter = 100*time.Millisecond, time.Second // a sweep every 0.5-0.6 s
	start(t, cfg)
	sweeps := func() int {
		var n int
		if err := db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'cadre_orphan_sweep' AND state = 'completed'`).Scan(&n); err != nil {
			return 0 // River's tables may not be there yet
		}
		return n
	}
	// Past the sweep a new leader runs at once: the schedule is running.
	eventually(t, "two sweeps", func() bool { return sweeps() >= 2 })
	register(t, db, "dead")
	silence(t, db, "dead", time.Hour)
	running(t, db, "lost", "dead", task.KindLocalAgent, task.StatusRunning, time.Hour)
	eventually(t, "the lost task failed by the periodic sweep", func() bool {
		tk, err := db.GetTask(t.Context(), "lost")
		return err == nil && tk.Status == task.StatusFailed
	})
	// The node heartbeats every 100 ms: its own task, swept by the same
	// periodic runs, is still running.
	if tk, _ := db.GetTask(t.Context(), "mine"); tk.Status != task.StatusRunning {
		t.Errorf("the live node's task is %s (%s)", tk.Status, tk.Error)
	}
}
