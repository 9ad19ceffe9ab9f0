package heartbeat

import (
	"context"
	"log/slog"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
)

// Records is what a heartbeat needs of the task store.
type Records interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error)
}

// Watcher tells at once that a task's record changed, through any process
// (mailbox.TaskWatcher).
type Watcher interface {
	WatchTask(ctx context.Context, taskID string) (changed <-chan struct{}, stop func())
}

// StopWatcher is a Watcher that can also tell of the changes after which a
// record asks for a stop, and only those (and the times a change may have
// been missed): the PostgreSQL store's WatchStop. A heartbeat wakes only to
// learn of a stop, so it re-reads the record for those, not for each
// change its own run makes.
type StopWatcher interface {
	WatchStop(ctx context.Context, taskID string) (asked <-chan struct{}, stop func())
}

// Figures are what a dispatched run's record shows of it while it runs:
// its tool uses and its newest text (the record's Result is the partial
// text of a run not yet complete).
type Figures struct {
	ToolUses int
	Text     string
}

// Beater beats for the background runs of one process.
type Beater struct {
	Tasks Records
	// Watch, if set, hears a change to a record (a stop from anywhere) at
	// once; the tick still refreshes the heartbeat and is the fallback
	// should notifications fail.
	Watch    Watcher
	Interval time.Duration
	Now      func() time.Time
	Log      *slog.Logger
}

// Run is one run a Beater beats for.
type Run struct {
	ID string
	// Done is closed when the run ended: the heartbeat stops.
	Done <-chan struct{}
	// Stop stops the run, when its record asks for a stop.
	Stop func()
	// Figures, if set, are the run's figures so far, to show on its record
	// (a dispatched run's); they are written only when they changed, since
	// that write is announced to every node.
	Figures func() Figures
}

// Beat refreshes r's record's heartbeat every Interval, and stops r when
// its record asks for a stop, until r is done.
func (b Beater) Beat(ctx context.Context, r Run) {
	tick := time.NewTicker(b.Interval)
	defer tick.Stop()
	var sent Figures // what the record shows of a dispatched run
	var changed <-chan struct{}
	if sw, ok := b.Watch.(StopWatcher); ok {
		ch, stop := sw.WatchStop(ctx, r.ID)
		defer stop()
		changed = ch
	} else if b.Watch != nil {
		ch, stop := b.Watch.WatchTask(ctx, r.ID)
		defer stop()
		changed = ch
	}
	for {
		select {
		case <-r.Done:
			return
		case <-changed:
			rec, err := b.Tasks.GetTask(ctx, r.ID)
			if err != nil {
				b.Log.WarnContext(ctx, "read a background task's record after it changed", "task_id", r.ID, "err", err)
			}
			if err == nil && rec.CancelRequested && !rec.Status.Terminal() {
				r.Stop()
				return
			}
			continue
		case <-tick.C:
		}
		var shown *Figures
		if r.Figures != nil {
			if f := r.Figures(); f != sent {
				shown = &f
			}
		}
		rec, err := b.Tasks.UpdateTask(ctx, r.ID, func(rec *task.Task) error {
			if !rec.Status.Terminal() {
				rec.Heartbeat = b.Now()
				if shown != nil {
					rec.ToolUses, rec.Result = shown.ToolUses, shown.Text
				}
			}
			return nil
		})
		if err != nil {
			b.Log.WarnContext(ctx, "refresh a background task's heartbeat", "task_id", r.ID, "err", err)
		} else if shown != nil {
			sent = *shown
		}
		if err == nil && rec.CancelRequested && !rec.Status.Terminal() {
			r.Stop()
			return
		}
	}
}
