package cluster

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
)

// pruneAfter is how long the record of a node gone for good is kept beyond
// the orphan timeout, for people asking what ran where.
const pruneAfter = 24 * time.Hour

// sweepArgs is the orphan sweep's job.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "cadre_orphan_sweep" }

// sweepWorker runs Sweep, then prunes old node records.
type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	store       Store
	orphanAfter time.Duration
	log         *slog.Logger
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	// Any node may work the job: no owner locks of one CADRE_HOME apply.
	swept, err := Sweep(ctx, w.store, w.orphanAfter, nil)
	for _, t := range swept.Tasks {
		w.log.InfoContext(ctx, "failed a task of a lost node", "task_id", t.ID, "owner", t.Owner, "reason", t.Error)
	}
	if err != nil {
		return err
	}
	_, err = w.store.PruneNodes(ctx, w.orphanAfter+pruneAfter)
	return err
}

// Timeout bounds one sweep by its period: a sweep stuck longer is
// abandoned, and the next one starts afresh.
func (w *sweepWorker) Timeout(*river.Job[sweepArgs]) time.Duration {
	return SweepEvery(w.orphanAfter)
}

// jittered is a PeriodicSchedule: every, plus a random extra of up to a
// fifth of it, so nodes' maintenance does not fall in step.
type jittered struct{ every time.Duration }

func (j jittered) Next(t time.Time) time.Time {
	return t.Add(j.every + rand.N(j.every/5+1))
}
