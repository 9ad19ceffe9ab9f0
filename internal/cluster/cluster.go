package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/task"
)

const (
	// DefaultStopGrace is how long Close lets running jobs finish before
	// their contexts are cancelled, when Config.StopGrace is 0.
	DefaultStopGrace = 10 * time.Second
	// DefaultHeartbeat and DefaultOrphanAfter are the settings' defaults
	// (store.heartbeatSeconds, store.orphanAfterSeconds).
	DefaultHeartbeat   = 30 * time.Second
	DefaultOrphanAfter = 600 * time.Second

	// MaintenanceQueue is the River queue of cadre's own maintenance jobs
	// (the orphan sweep), one worker on every node.
	MaintenanceQueue = "cadre_maintenance"

	// minConns is the smallest pool a node works with: River's listener
	// keeps one connection for itself, and at start one holds the
	// migration lock while another migrates; two beside the listener
	// let the store and River's other services proceed side by side.
	minConns = 3

	// leaveTimeout bounds the write that records a clean leave at Close.
	leaveTimeout = 5 * time.Second
)

// Config configures a Node.
type Config struct {
	// Store is the PostgreSQL store the node shares with the others: it
	// holds the node records, and the tasks and sessions the sweep fails.
	Store Store
	// Pool is the pool River runs on: a pool of River's own
	// (postgres.DB.RiverPool), so that a node's runs cannot take the
	// connections its leader election and fetches need. It must allow at
	// least minConns connections.
	Pool *pgxpool.Pool
	// NodeID names this node: the process's task owner id
	// (task.Owner.ID), which its tasks and sessions record. It is also
	// River's client id, so a job's attempted_by names the node that ran
	// it.
	NodeID string
	// Host and PID are recorded for people reading the node records;
	// defaults: os.Hostname and os.Getpid. Liveness never rests on them.
	Host string
	PID  int
	// Heartbeat is how often the node stamps its record (default
	// DefaultHeartbeat); OrphanAfter how long a node may stay silent
	// before its tasks are failed (default DefaultOrphanAfter, at least
	// twice Heartbeat).
	Heartbeat, OrphanAfter time.Duration
	// Workers are the caller's River workers. Start adds its own to the
	// bundle; nil means none of the caller's.
	Workers *river.Workers
	// Queues are the caller's River queues, with their per-node worker
	// limits. MaintenanceQueue is Start's own: naming it is an error.
	Queues map[string]river.QueueConfig
	// StopGrace bounds how long Close waits for running jobs before
	// cancelling their contexts; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// Logger receives River's logs and the node's own problems; nil
	// discards them (River would otherwise write to stdout).
	Logger *slog.Logger
}

// SweepEvery is how often the leader enqueues the orphan sweep for an
// orphan timeout: half of it, at most five minutes (S-X2), so that a
// silent node's tasks fail at most about 1.5 × orphanAfter after its last
// heartbeat. Each run is put off by a random extra of up to a fifth of
// that.
func SweepEvery(orphanAfter time.Duration) time.Duration {
	return min(5*time.Minute, orphanAfter/2)
}

// Node is this process's membership of the cluster. Its methods are safe
// for concurrent use.
type Node struct {
	cfg    Config
	client *river.Client[pgx.Tx]

	cancel context.CancelFunc // ends run
	// ready is closed once start-up is over, with startErr set; done once
	// run has returned, with closeErr set.
	ready, done chan struct{}
	startErr    error
	closeErr    error

	closeOnce sync.Once
}

// Start checks cfg, builds River's client and starts, in a goroutine the
// Node owns, what needs the database: the node's record, River's
// migrations, River's client, and the heartbeat. It does no database work
// itself, so it is cheap; Client waits for the rest. ctx bounds nothing
// after Start returns (Close does).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("start cluster node: %w", err)
	}
	workers := cfg.Workers
	if workers == nil {
		workers = river.NewWorkers()
	}
	sw := &sweepWorker{store: cfg.Store, orphanAfter: cfg.OrphanAfter, log: cfg.Logger}
	if err := river.AddWorkerSafely(workers, sw); err != nil {
		return nil, fmt.Errorf("start cluster node: %w", err)
	}
	queues := maps.Clone(cfg.Queues)
	if queues == nil {
		queues = map[string]river.QueueConfig{}
	}
	queues[MaintenanceQueue] = river.QueueConfig{MaxWorkers: 1}
	every := SweepEvery(cfg.OrphanAfter)
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{
		ID:      cfg.NodeID,
		Logger:  cfg.Logger,
		Workers: workers,
		Queues:  queues,
		// Only the leader enqueues periodic jobs, so one sweep runs per
		// period in the whole cluster (any node's maintenance worker may
		// take it). River's schedule lives in the leader's memory and
		// starts over with each leader: a new leader sweeps at once
		// (RunOnStart), so neither a leader's death nor leaders that
		// come and go faster than the period put the sweep off; the
		// unique period keeps such starts to one sweep a period.
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(jittered{every},
			func() (river.JobArgs, *river.InsertOpts) {
				// One attempt: a failed sweep is not retried, the next
				// period's is.
				return sweepArgs{}, &river.InsertOpts{Queue: MaintenanceQueue, MaxAttempts: 1,
					UniqueOpts: river.UniqueOpts{ByPeriod: max(every, time.Second)}} // River's least
			}, &river.PeriodicJobOpts{ID: "cadre_orphan_sweep", RunOnStart: true})},
		// A job runs as long as the work it carries: a subagent run has
		// its own time limit (subagents.runTimeoutSeconds), and River's
		// default of one minute would cut runs short.
		JobTimeout:      -1,
		SoftStopTimeout: cfg.StopGrace,
	})
	if err != nil {
		return nil, fmt.Errorf("start cluster node %s: %w", cfg.NodeID, err)
	}
	n := &Node{cfg: cfg, client: client, ready: make(chan struct{}), done: make(chan struct{})}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	go n.run(runCtx)
	return n, nil
}

// check validates c and fills in its defaults.
func (c *Config) check() error {
	switch {
	case c.Store == nil:
		return errors.New("no store")
	case c.Pool == nil:
		return errors.New("no connection pool")
	}
	if err := task.ValidateID(c.NodeID); err != nil {
		return fmt.Errorf("node id: %w", err)
	}
	if max := c.Pool.Config().MaxConns; max < minConns {
		return fmt.Errorf("the store's pool allows %d connection(s); a node needs at least %d (raise pool_max_conns in the store URL)", max, minConns)
	}
	for name, d := range map[string]time.Duration{"stop grace": c.StopGrace, "heartbeat": c.Heartbeat, "orphan timeout": c.OrphanAfter} {
		if d < 0 {
			return fmt.Errorf("negative %s %s", name, d)
		}
	}
	c.StopGrace = cmpOr(c.StopGrace, DefaultStopGrace)
	c.Heartbeat = cmpOr(c.Heartbeat, DefaultHeartbeat)
	c.OrphanAfter = cmpOr(c.OrphanAfter, DefaultOrphanAfter)
	if c.OrphanAfter < 2*c.Heartbeat {
		return fmt.Errorf("orphan timeout %s is less than twice the heartbeat %s: a live node would look lost between two heartbeats", c.OrphanAfter, c.Heartbeat)
	}
	if _, ok := c.Queues[MaintenanceQueue]; ok {
		return fmt.Errorf("queue %s is cadre's own", MaintenanceQueue)
	}
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	if c.PID == 0 {
		c.PID = os.Getpid()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// run registers the node, starts River and heartbeats until Close cancels
// ctx; then it stops River and records the clean leave.
func (n *Node) run(ctx context.Context) {
	defer close(n.done)
	log := n.cfg.Logger.With("node", n.cfg.NodeID)
	// The record first: liveness should not wait for River. A failure
	// is retried at every heartbeat.
	registered := n.register(ctx, log)
	err := n.migrate(ctx, log)
	if err == nil {
		// River's own context is not ctx: cancelling it would hard-stop
		// running jobs, and Close wants a graceful stop (below). A start
		// that meets the database going away (a restart) is retried as
		// the migrations are: River leaves a failed start stopped, so it
		// may be started again.
		err = postgres.Retry(ctx, log, func(context.Context) error {
			return n.client.Start(context.WithoutCancel(ctx))
		})
	}
	if err != nil {
		err = fmt.Errorf("cluster node %s: %w", n.cfg.NodeID, err)
		if ctx.Err() == nil {
			log.ErrorContext(ctx, "start River", "err", err)
		}
	}
	n.startErr = err
	close(n.ready)

	// The heartbeat goes on even if River could not start: the tasks
	// this process runs must not be failed as lost while it lives.
	tick := time.NewTicker(n.cfg.Heartbeat)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			registered = n.beat(ctx, log, registered)
		}
	}

	var errs []error
	if n.startErr == nil {
		// A soft stop: running jobs finish, or after StopGrace (River's
		// SoftStopTimeout) see their contexts cancelled; Stop returns
		// once River's goroutines are gone.
		if err := n.client.Stop(context.WithoutCancel(ctx)); err != nil {
			errs = append(errs, fmt.Errorf("stop River: %w", err))
		}
	}
	if registered {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
		defer cancel()
		if err := n.cfg.Store.LeaveNode(lctx, n.cfg.NodeID); err != nil && !errors.Is(err, postgres.ErrNodeNotFound) {
			errs = append(errs, err)
		}
	}
	n.closeErr = errors.Join(errs...)
}

// migrate brings River's tables up to date, retrying through a passing
// connection failure (a server restarting as the node starts) for up to
// postgres.DefaultRetryFor, as the store's own statements do.
func (n *Node) migrate(ctx context.Context, log *slog.Logger) error {
	return postgres.Retry(ctx, log, func(ctx context.Context) error { return migrateRiver(ctx, n.cfg.Pool, n.cfg.Logger) })
}

func (n *Node) register(ctx context.Context, log *slog.Logger) bool {
	err := n.cfg.Store.RegisterNode(ctx, n.cfg.NodeID, n.cfg.Host, n.cfg.PID)
	if err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "record this node", "err", err)
	}
	return err == nil
}

// beat stamps the node's heartbeat, registering it first if that has not
// worked yet or its record is gone (pruned while it could not reach the
// database); it reports whether the node is registered.
func (n *Node) beat(ctx context.Context, log *slog.Logger, registered bool) bool {
	if !registered {
		return n.register(ctx, log)
	}
	err := n.cfg.Store.HeartbeatNode(ctx, n.cfg.NodeID)
	switch {
	case errors.Is(err, postgres.ErrNodeNotFound):
		return n.register(ctx, log)
	case err != nil && ctx.Err() == nil:
		log.WarnContext(ctx, "heartbeat", "err", err)
	}
	return true
}

// Client waits until River is migrated and started and returns its
// client, to insert and cancel jobs (JobCancel reaches the node working
// the job). The error is start-up's, or ctx's.
func (n *Node) Client(ctx context.Context) (*river.Client[pgx.Tx], error) {
	select {
	case <-n.ready:
		if n.startErr != nil {
			return nil, n.startErr
		}
		return n.client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ID is the node's id (Config.NodeID).
func (n *Node) ID() string { return n.cfg.NodeID }

// OrphanAfter is the node's orphan timeout, defaults applied.
func (n *Node) OrphanAfter() time.Duration { return n.cfg.OrphanAfter }

// Close stops the node: an unfinished start-up is abandoned, River stops
// gracefully (see Config.StopGrace), the heartbeat stops and the record
// says the node left. It returns once every goroutine the Node started has
// ended. It does not close the pool or the store. Calling it again returns
// the first call's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		<-n.done
	})
	return n.closeErr
}
