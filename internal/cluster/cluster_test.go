package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

// pg is the test binary's throwaway server; Main also checks that no test
// leaves a goroutine behind (goleak), which is how Close is held to
// waiting for everything a Node started.
var pg pgtest.Server

func TestMain(m *testing.M) { pg.Main(m) }

// wait bounds every wait on an event: generous, since the machine is
// shared, and never a way to synchronise.
const wait = 60 * time.Second

var _ Store = (*postgres.DB)(nil)

// config is a node's Config on db.
func config(db *postgres.DB, id string) Config {
	return Config{Store: db, Pool: db.Pool(), NodeID: id}
}

func start(t *testing.T, cfg Config) *Node {
	t.Helper()
	n, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return n
}

func client(t *testing.T, n *Node) *river.Client[pgx.Tx] {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	c, err := n.Client(ctx)
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	return c
}

// TestConcurrentStartMigratesOnce: two nodes starting together on an empty
// database both come up, and River's schema is applied once (rivermigrate
// takes no lock of its own: without cadre's, both would create River's
// tables and one would fail).
func TestConcurrentStartMigratesOnce(t *testing.T) {
	url := pg.URL(t)
	a, b := pgstore.Open(t, url), pgstore.Open(t, url)
	var wg sync.WaitGroup
	for i, db := range []*postgres.DB{a, b} {
		n := start(t, config(db, []string{"node-a", "node-b"}[i]))
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			if _, err := n.Client(ctx); err != nil {
				t.Errorf("node %s: %v", n.ID(), err)
			}
		})
	}
	wg.Wait()
	m, err := rivermigrate.New(riverpgxv5.New(a.Pool()), nil)
	if err != nil {
		t.Fatal(err)
	}
	have, err := m.ExistingVersions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := len(m.AllVersions()); len(have) != want {
		t.Errorf("River has %d versions applied, want all %d", len(have), want)
	}
}

// TestStartChecks: a config Start cannot use is refused at once, saying
// what is wrong.
func TestStartChecks(t *testing.T) {
	db := pgstore.Open(t, pg.URL(t))
	one, err := pgxpool.New(t.Context(), pg.URL(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	with := func(f func(*Config)) Config {
		c := config(db, "n1")
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", with(func(c *Config) { c.Store = nil }), "no store"},
		{"no pool", with(func(c *Config) { c.Pool = nil }), "no connection pool"},
		{"bad node id", with(func(c *Config) { c.NodeID = "../x" }), "node id"},
		{"one connection", with(func(c *Config) { c.Pool = one }), "pool_max_conns"},
		{"bad queue", with(func(c *Config) { c.Queues = map[string]river.QueueConfig{"Bad Name": {MaxWorkers: 1}} }), "queue name"},
		{"cadre's queue", with(func(c *Config) { c.Queues = map[string]river.QueueConfig{MaintenanceQueue: {MaxWorkers: 1}} }), "cadre's own"},
		{"orphan timeout too short", with(func(c *Config) { c.Heartbeat, c.OrphanAfter = 10*time.Second, 15*time.Second }), "less than twice the heartbeat"},
		{"negative heartbeat", with(func(c *Config) { c.Heartbeat = -time.Second }), "negative heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Start(t.Context(), tc.cfg)
			if err == nil {
				n.Close()
				t.Fatal("Start succeeded")
			}
			if !contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// holdArgs is a job that runs until released or cancelled.
type holdArgs struct{}

func (holdArgs) Kind() string { return "cadre_test_hold" }

type holdWorker struct {
	river.WorkerDefaults[holdArgs]
	started chan struct{} // gets a value when Work starts
	ended   chan error    // gets Work's result
	release chan struct{}
}

func (w *holdWorker) Work(ctx context.Context, _ *river.Job[holdArgs]) error {
	w.started <- struct{}{}
	var err error
	select {
	case <-w.release:
	case <-ctx.Done():
		err = ctx.Err()
	}
	w.ended <- err
	return err
}

// TestCallerWorkersAndGracefulClose: the caller's workers and queues are
// River's; a job inserted through Client runs on the node, and Close lets
// a running job go on until the grace period ends, then cancels it, and
// returns only after its Work has returned.
func TestCallerWorkersAndGracefulClose(t *testing.T) {
	db := pgstore.Open(t, pg.URL(t))
	w := &holdWorker{started: make(chan struct{}, 1), ended: make(chan error, 1), release: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	cfg := config(db, "node-w")
	cfg.Workers, cfg.Queues = workers, map[string]river.QueueConfig{"node_node-w": {MaxWorkers: 1}}
	cfg.StopGrace = 200 * time.Millisecond
	n, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, n)
	if _, err := c.Insert(t.Context(), holdArgs{}, &river.InsertOpts{Queue: "node_node-w"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.started:
	case <-time.After(wait):
		t.Fatal("the job never started")
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close returned: Work has returned, cancelled by the end of the
	// grace period (it was never released).
	select {
	case err := <-w.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Work ended with %v, want its context cancelled", err)
		}
	default:
		t.Fatal("Close returned while the job was still running")
	}
}

// TestCloseDuringStart: Close right after Start abandons the start-up and
// leaves nothing running (goleak in TestMain); Client then reports the
// node unusable rather than hanging.
func TestCloseDuringStart(t *testing.T) {
	n, err := Start(t.Context(), config(pgstore.Open(t, pg.URL(t)), "node-c"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if _, err := n.Client(ctx); err != nil && errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Client after Close waited for its deadline: %v", err)
	}
}
