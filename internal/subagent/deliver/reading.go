package deliver

import (
	"context"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// Reading is one reader's look at a task, from the moment it finds the
// task to the moment it has shown what it saw: the one read sequence
// every reader goes through (TaskOutput, task_output, wait_async_results,
// agent_send's wait), so that they cannot differ in how they deliver:
//
//	r, err := desk.Read(ctx, id) // find the task and watch its run
//	defer r.Close()              // stop watching, once shown
//	err = r.Await(ctx, d)        // if the reader blocks: its end, or d
//	d := r.Claim(ctx)            // who delivers the end it saw
//
// then show r.Record() (and r.OutputTail while it goes on), or d.Note()
// instead of a result it must not show.
type Reading struct {
	d  *Desk
	id string
	// watched is the run in this process the reader watches (nil: none
	// when it looked); it decides the claim, even once the run is over.
	watched Run
	w       *Watcher
	lt      Run // the run as last read: nil once it is over
	rec     task.Task
}

// Read finds task id — its run in this process, its record, or a
// foreground run's description — and watches the run, if there is one,
// until Close: a run that ends meanwhile hands its end to the reader
// rather than notifying (Watch).
func (d *Desk) Read(ctx context.Context, id string) (*Reading, error) {
	lt, rec, err := d.Runs.Find(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	r := &Reading{d: d, id: rec.ID, watched: lt, lt: lt, rec: rec}
	if lt != nil {
		r.w = d.Watch(lt)
	}
	return r, nil
}

// ReadRunning is Read of a run the reader holds already (agent_send
// waiting for the agent its message went to), not yet known to have
// ended; rec is what the reader knows of its task.
func (d *Desk) ReadRunning(lt Run, rec task.Task) *Reading {
	return &Reading{d: d, id: rec.ID, watched: lt, w: d.Watch(lt), lt: lt, rec: rec}
}

// Await waits up to dur for the task to end, unless it has, then reads it
// again: the record, or for a run that ended in the foreground (it leaves
// none) what the run says of itself. The error is the context's when the
// wait was cancelled, else the read's.
func (r *Reading) Await(ctx context.Context, dur time.Duration) error {
	if r.Ended() {
		return nil
	}
	if _, err := r.d.awaitEnd(ctx, r.id, r.w, dur); err != nil && ctx.Err() != nil {
		return err
	}
	return r.Refresh(ctx)
}

// Refresh reads the task again; on an error the last reading stands.
func (r *Reading) Refresh(ctx context.Context) error {
	lt, rec, err := r.d.Runs.Find(ctx, r.id, r.watched)
	if err != nil {
		return err
	}
	r.lt, r.rec = lt, rec
	return nil
}

// ID is the task's id.
func (r *Reading) ID() string { return r.id }

// Ended reports whether the task had ended when last read.
func (r *Reading) Ended() bool { return r.rec.Status.Terminal() }

// Record is the task as last read.
func (r *Reading) Record() task.Task { return r.rec }

// OutputTail is the last n bytes of the task's output so far: its run's
// log in this process, else the output file its record names.
func (r *Reading) OutputTail(ctx context.Context, n int) string {
	if r.lt != nil {
		return r.lt.OutputTail(n)
	}
	return r.d.Runs.Tail(ctx, r.rec, n)
}

// Claim decides what the reader may show of the end it saw (the package
// comment's rules); of a task still going there is no end to deliver, and
// its output so far is shown (Show).
func (r *Reading) Claim(ctx context.Context) Delivery {
	if !r.Ended() {
		return Show
	}
	return r.d.Claim(ctx, r.id, r.watched)
}

// Close stops watching the run; the reader has claimed the end it saw, if
// any (Watcher.Leave). Calling it again does nothing.
func (r *Reading) Close() {
	if r.w != nil {
		r.w.Leave()
	}
}

// AwaitRecord waits up to dur for task id to end, reading its record
// wherever it runs, and returns the record as it was last read.
func (d *Desk) AwaitRecord(ctx context.Context, id string, dur time.Duration) (task.Task, error) {
	return d.awaitEnd(ctx, id, nil, dur)
}

// awaitEnd waits up to dur for task id to end: on the run itself when it
// is in this process (w watches it), else by reading its record (it runs
// elsewhere).
func (d *Desk) awaitEnd(ctx context.Context, id string, w *Watcher, dur time.Duration) (task.Task, error) {
	tool.Yield(ctx) // the task runs on its own: the caller's other calls go on meanwhile
	if w != nil {
		if !w.Wait(ctx, dur) && ctx.Err() != nil {
			return task.Task{}, ctx.Err()
		}
		if _, rec, err := d.Runs.Find(context.Background(), id, nil); err == nil {
			return rec, nil
		}
	}
	timer := time.NewTimer(dur)
	defer timer.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		rec, err := d.Tasks.GetTask(ctx, id)
		if err != nil || rec.Status.Terminal() {
			return rec, err
		}
		select {
		case <-tick.C:
		case <-timer.C:
			return rec, nil
		case <-ctx.Done():
			return task.Task{}, ctx.Err()
		}
	}
}

// Retrieval is a reader's retrieval_status for a task in status s: success
// once it ended, timeout while it goes on.
func Retrieval(s task.Status) string {
	if s.Terminal() {
		return "success"
	}
	return "timeout"
}
