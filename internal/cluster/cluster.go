package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/cadre-dev/cadre/internal/task"
)

// DefaultStopGrace is how long Close lets running jobs finish before their
// contexts are cancelled, when Config.StopGrace is 0.
const DefaultStopGrace = 10 * time.Second

// Config configures a Node.
type Config struct {
	// Pool is the store's connection pool; River runs on it. It must allow
	// at least two connections (pool_max_conns): one holds the migration
	// lock while another migrates.
	Pool *pgxpool.Pool
	// NodeID names this node: the process's task owner id
	// (task.Owner.ID), which its tasks record. It is also River's client
	// id, so a job's attempted_by names the node that ran it.
	NodeID string
	// Workers are the caller's River workers. Start adds its own to the
	// bundle; nil means none of the caller's.
	Workers *river.Workers
	// Queues are the caller's River queues, with their per-node worker
	// limits. A name Start uses itself is an error.
	Queues map[string]river.QueueConfig
	// StopGrace bounds how long Close waits for running jobs before
	// cancelling their contexts; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// Logger receives River's logs and the node's own problems; nil
	// discards them (River would otherwise write to stdout).
	Logger *slog.Logger
}

// Node is this process's membership of the cluster. Its methods are safe
// for concurrent use.
type Node struct {
	cfg    Config
	client *river.Client[pgx.Tx]
	// work says whether River is started to work jobs: a client with no
	// workers only inserts.
	work bool

	cancel context.CancelFunc // ends run
	// ready is closed once start-up is over, with startErr set; done once
	// run has returned.
	ready, done chan struct{}
	startErr    error

	closeOnce sync.Once
	closeErr  error
}

// Start checks cfg, builds River's client and starts, in a goroutine the
// Node owns, what needs the database: River's migrations, then River's
// client. It does no database work itself, so it is cheap; Client waits
// for the rest. ctx bounds nothing after Start returns (Close does).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Pool == nil {
		return nil, errors.New("start cluster node: no connection pool")
	}
	if err := task.ValidateID(cfg.NodeID); err != nil {
		return nil, fmt.Errorf("start cluster node: node id: %w", err)
	}
	if max := cfg.Pool.Config().MaxConns; max < 2 {
		return nil, fmt.Errorf("start cluster node: the store's pool allows %d connection(s); River needs at least 2 (raise pool_max_conns in the store URL)", max)
	}
	if cfg.StopGrace < 0 {
		return nil, fmt.Errorf("start cluster node: negative stop grace %s", cfg.StopGrace)
	}
	if cfg.StopGrace == 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	workers := cfg.Workers
	if workers == nil {
		workers = river.NewWorkers()
	}
	queues := maps.Clone(cfg.Queues)
	n := &Node{cfg: cfg, ready: make(chan struct{}), done: make(chan struct{})}
	// River refuses to start a client that has no worker: such a node
	// only inserts jobs for others to work.
	n.work = len(queues) > 0
	rc := &river.Config{
		ID:     cfg.NodeID,
		Logger: cfg.Logger,
		// A job runs as long as the work it carries: a subagent run has
		// its own time limit (subagents.runTimeoutSeconds), and River's
		// default of one minute would cut runs short.
		JobTimeout:      -1,
		SoftStopTimeout: cfg.StopGrace,
	}
	if n.work {
		rc.Workers, rc.Queues = workers, queues
	}
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), rc)
	if err != nil {
		return nil, fmt.Errorf("start cluster node %s: %w", cfg.NodeID, err)
	}
	n.client = client
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	go n.run(runCtx)
	return n, nil
}

// run starts the node and, once Close cancels ctx, stops it.
func (n *Node) run(ctx context.Context) {
	defer close(n.done)
	err := migrateRiver(ctx, n.cfg.Pool, n.cfg.Logger)
	if err == nil && n.work {
		// River's own context is not ctx: cancelling it would hard-stop
		// running jobs, and Close wants a graceful stop (below).
		err = n.client.Start(context.WithoutCancel(ctx))
	}
	if err != nil {
		err = fmt.Errorf("cluster node %s: %w", n.cfg.NodeID, err)
		n.cfg.Logger.ErrorContext(ctx, "start cluster node", "err", err)
	}
	n.startErr = err
	close(n.ready)
	if err != nil {
		return
	}
	<-ctx.Done()
	if n.work {
		// A soft stop: running jobs finish, or after StopGrace (River's
		// SoftStopTimeout) see their contexts cancelled; Stop returns
		// once River's goroutines are gone.
		if err := n.client.Stop(context.WithoutCancel(ctx)); err != nil {
			n.closeErr = fmt.Errorf("stop River: %w", err)
		}
	}
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

// Close stops the node: an unfinished start-up is abandoned, River stops
// gracefully (see Config.StopGrace), and Close returns once every
// goroutine the Node started has ended. It does not close the pool.
// Calling it again returns the first call's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		<-n.done
	})
	return n.closeErr
}
