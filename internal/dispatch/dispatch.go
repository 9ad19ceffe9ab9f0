package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/cadre-dev/cadre/internal/crossnode"
)

// Queue is the River queue of background runs that any node may run.
const Queue = "subagents"

// retryAfter is how soon a job a full node passed on is offered again.
const retryAfter = 50 * time.Millisecond

// Args is a background run's job.
type Args struct {
	crossnode.Job
}

// Kind names the job kind in River's tables.
func (Args) Kind() string { return "cadre_subagent_run" }

// Runner runs a dispatched background run on this node: the subagent
// service.
type Runner interface {
	RunDispatched(ctx context.Context, job crossnode.Job) error
}

// Worker works the background-run jobs of this node. Its Runner is set
// once the service exists (Bind): jobs fetched before wait for it.
type Worker struct {
	river.WorkerDefaults[Args]
	bound  chan struct{}
	runner Runner
}

// NewWorker returns a Worker waiting for its Runner.
func NewWorker() *Worker { return &Worker{bound: make(chan struct{})} }

// Bind gives w its Runner; call it once.
func (w *Worker) Bind(r Runner) {
	w.runner = r
	close(w.bound)
}

// Timeout: a run lasts as long as it lasts (subagents.runTimeoutSeconds
// bounds it, not the queue).
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return -1 }

// Work runs the job's run here, or passes it on when this node's lane is
// full (River offers it again, to any node, without counting an attempt).
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	select {
	case <-w.bound:
	case <-ctx.Done():
		return river.JobSnooze(0)
	}
	err := w.runner.RunDispatched(ctx, job.Args.Job)
	switch {
	case errors.Is(err, crossnode.ErrNoPlace):
		return river.JobSnooze(retryAfter)
	case err != nil:
		// A job the service refuses (it does not validate) will not
		// do better on another attempt.
		return river.JobCancel(err)
	}
	return nil
}

// Clients gives the River client once the node has started it.
type Clients interface {
	Client(ctx context.Context) (*river.Client[pgx.Tx], error)
}

// Beginner starts a transaction: the store's connection pool.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Dispatcher inserts background runs into the shared queue.
type Dispatcher struct {
	Clients Clients
	// Pool, if set, is where jobs are inserted (each in a transaction
	// of its own) rather than through the River client's pool. A
	// launch of thousands of runs inserts thousands of jobs at once;
	// through River's own small pool they would starve its leader
	// election and fetches of connections.
	Pool Beginner
}

// Dispatch stores job in the queue; the first node with a free place
// takes it. One attempt: a run is not started twice (the record decides
// anyway), and a node that dies mid-run leaves it to the orphan sweeper.
func (d Dispatcher) Dispatch(ctx context.Context, job crossnode.Job) error {
	c, err := d.Clients.Client(ctx)
	if err != nil {
		return fmt.Errorf("the job queue is not available: %w", err)
	}
	opts := &river.InsertOpts{Queue: Queue, MaxAttempts: 1}
	if d.Pool == nil {
		_, err = c.Insert(ctx, Args{job}, opts)
	} else {
		err = pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
			_, err := c.InsertTx(ctx, tx, Args{job}, opts)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("queue the run: %w", err)
	}
	return nil
}
