package dispatch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/cadre-dev/cadre/internal/cluster"
	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

var pg pgtest.Server

func TestMain(m *testing.M) { pg.Main(m) }

// wait bounds every wait on an event.
const wait = 60 * time.Second

// fakeNode runs dispatched jobs as a subagent service would: up to lane
// at once, the rest refused with ErrNoPlace; each run lasts until release
// is closed.
type fakeNode struct {
	name    string
	lane    int
	release chan struct{}
	ran     chan<- string // "node:task" once a run started

	mu      sync.Mutex
	running int
}

func (n *fakeNode) RunDispatched(ctx context.Context, job crossnode.Job) error {
	if err := job.Validate(3); err != nil { // the core's spawn depth cap
		return err
	}
	n.mu.Lock()
	if n.running == n.lane {
		n.mu.Unlock()
		return crossnode.ErrNoPlace
	}
	n.running++
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.running--
		n.mu.Unlock()
	}()
	n.ran <- n.name + ":" + job.TaskID
	select {
	case <-n.release:
	case <-ctx.Done():
	}
	return nil
}

// startNode starts a cluster node that works the queue with r.
func startNode(t *testing.T, db *postgres.DB, id string, r Runner, lane int) *cluster.Node {
	t.Helper()
	w := NewWorker()
	ws := river.NewWorkers()
	river.AddWorker(ws, w)
	n, err := cluster.Start(t.Context(), cluster.Config{
		Store: db, Pool: db.Pool(), NodeID: id, Workers: ws,
		Queues: map[string]river.QueueConfig{Queue: {MaxWorkers: lane}}, StopGrace: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Bind(r)
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("Close %s: %v", id, err)
		}
	})
	return n
}

// TestJobsGoToNodesWithAFreePlace: four runs dispatched from node A, whose
// lane has one place, while node B has three: each node runs at most its
// lane's worth, and all four run.
func TestJobsGoToNodesWithAFreePlace(t *testing.T) {
	url := pg.URL(t)
	db := pgstore.Open(t, url)
	release := make(chan struct{})
	ran := make(chan string, 8)
	a := &fakeNode{name: "a", lane: 1, release: release, ran: ran}
	b := &fakeNode{name: "b", lane: 3, release: release, ran: ran}
	na := startNode(t, db, "node-a", a, a.lane)
	startNode(t, db, "node-b", b, b.lane)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	d := Dispatcher{Clients: na}
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		if err := d.Dispatch(ctx, crossnode.Job{TaskID: id, Cwd: "/w", CallerAgent: "main"}); err != nil {
			t.Fatalf("Dispatch %s: %v", id, err)
		}
	}
	seen := map[string]bool{}
	per := map[string]int{}
	for range 4 {
		select {
		case r := <-ran:
			seen[r[2:]] = true
			per[r[:1]]++
		case <-ctx.Done():
			t.Fatalf("runs started: %v", seen)
		}
	}
	close(release)
	if len(seen) != 4 || per["a"] != 1 || per["b"] != 3 {
		t.Fatalf("runs per node %v (tasks %v); want a 1 (its lane) and b 3", per, seen)
	}
}

// TestWorkerRefusesABadJob: a job whose run the service refuses is
// cancelled, not retried.
func TestWorkerRefusesABadJob(t *testing.T) {
	w := NewWorker()
	w.Bind(runnerFunc(func(context.Context, crossnode.Job) error { return errors.New("bad") }))
	err := w.Work(t.Context(), &river.Job[Args]{Args: Args{crossnode.Job{TaskID: "x"}}})
	var cancelled *river.JobCancelError
	if !errors.As(err, &cancelled) {
		t.Fatalf("Work = %v, want a JobCancel", err)
	}
	w2 := NewWorker()
	w2.Bind(runnerFunc(func(context.Context, crossnode.Job) error { return crossnode.ErrNoPlace }))
	var snoozed *river.JobSnoozeError
	if err := w2.Work(t.Context(), &river.Job[Args]{}); !errors.As(err, &snoozed) {
		t.Fatalf("full lane: Work = %v, want a JobSnooze", err)
	}
}

type runnerFunc func(context.Context, crossnode.Job) error

func (f runnerFunc) RunDispatched(ctx context.Context, j crossnode.Job) error { return f(ctx, j) }
