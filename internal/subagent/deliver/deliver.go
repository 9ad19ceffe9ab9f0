package deliver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Desk delivers the ends of the runs of one service (see the package
// comment for the rules). It is safe for concurrent use.
type Desk struct {
	// Tasks keeps the records whose notified flag arbitrates against
	// other processes.
	Tasks task.Store
	// Queue carries notifications into agents' turns.
	Queue *queue.Queue
	// Runs finds a task for a reader.
	Runs Finder
	// Log receives a warning for a mark that failed.
	Log *slog.Logger

	// mu makes a notification's "mark notified, then queue" one step for
	// the readers.
	mu sync.Mutex
}

// Run is a run of this process as its delivery sees it.
type Run interface {
	// Phase says whether its end is decided, and where it ended.
	Phase() runs.Phase
	// Done is closed once its end is recorded and announced.
	Done() <-chan struct{}
	// OutputTail is the last n bytes of its log so far.
	OutputTail(n int) string
	// Delivery is how far the delivery of its end got, kept with the run.
	Delivery() *State
}

// Finder finds tasks for readers.
type Finder interface {
	// Find returns task id: its run in this process (nil when it has
	// none) and its record. known, when not nil, is the run the reader
	// watched: a run that just ended in the foreground leaves no record,
	// and is described from itself.
	Find(ctx context.Context, id string, known Run) (Run, task.Task, error)
	// Tail is the last n bytes of the log of rec, a run in another
	// process, read wherever the run is.
	Tail(ctx context.Context, rec task.Task, n int) string
}

// State is how far the delivery of a run's end got: the notice, the
// readers watching for it, and the notification handed to them. The zero
// State is a run nobody has delivered; the Desk's lock guards it.
type State struct {
	notice     noticeState
	watchers   int
	handedOver *Notice
	// marked is closed when the notification's MarkNotified has answered
	// (noticeMarking).
	marked chan struct{}
}

// noticeState is how far a background run's end has been delivered.
type noticeState int

const (
	noticeNone    noticeState = iota // nobody has delivered it yet
	noticeMarking                    // the notification is claiming the record's flag (State.marked)
	noticeQueued                     // the notification waits in the queue, or was read
	noticeClaimed                    // a reader showed it, or an ANNOUNCE_SKIP took it silently
)

// Delivery is what a reader may show of a run that ended.
type Delivery int

const (
	// Show: this reader delivers the result.
	Show Delivery = iota
	// Already: the notification, or another reader, delivered it.
	Already
	// ToSpawner: the run ended in the foreground; its result is the reply
	// of the call that started it.
	ToSpawner
)

// Note is what a reader says instead of a result it must not show ("" for
// Show).
func (d Delivery) Note() string {
	switch d {
	case Already:
		return alreadyDelivered
	case ToSpawner:
		return deliveredToSpawnerNote
	}
	return ""
}

// alreadyDelivered is what a reader says instead of a result the model has
// already been given.
const alreadyDelivered = "the result was already delivered to you, in a <task-notification> message or an earlier tool result; it is not repeated here"

// deliveredToSpawnerNote is what a reader says about a run that ended in
// the foreground.
const deliveredToSpawnerNote = "the agent ran in the foreground: its result is the reply of the call that started it, and is not repeated here"

// Notice is a run's notification, built when the run ends and sent then
// (Ended, Notify), or later by the last watcher to leave without the
// result.
type Notice struct {
	// Entry is the queue entry for the agent that started the run; its
	// TaskID names the run.
	Entry  queue.Entry
	Silent bool   // ANNOUNCE_SKIP: take the flag, queue nothing
	Event  func() // publishes the task_notification line, just before it is queued
}

// Claim decides whether a reader about to show how task id ended shows the
// result (see the package comment). t is the run the reader watched or
// found in this process, nil when it has none (the run ended before the
// reader looked, or runs in another process).
func (d *Desk) Claim(ctx context.Context, id string, t Run) Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	var st *State
	if t != nil {
		st = t.Delivery()
	}
	for st != nil && st.notice == noticeMarking {
		// The run's notification is claiming the record's flag, a store
		// write: what it gets decides, so wait for it (Notify).
		marked := st.marked
		d.mu.Unlock()
		<-marked
		d.mu.Lock()
	}
	if st != nil {
		p := t.Phase()
		ended, background := p.Ended(), p.Background()
		if ended && !background {
			return ToSpawner
		}
		if ended {
			switch st.notice {
			case noticeClaimed:
				return Already
			case noticeQueued:
				if d.Queue.Withdraw(id) {
					st.notice = noticeClaimed
					return Show
				}
				return Already
			}
			// The record arbitrates against readers in other processes.
			// A failed mark (a store error, or the record reset by a
			// resume since) leaves this process's state to decide: nobody
			// here delivered this end.
			won, err := d.Tasks.MarkNotified(context.WithoutCancel(ctx), id)
			if err != nil || won {
				st.notice = noticeClaimed
				return Show
			}
			return Already
		}
		// Not this run's end (a record older than the run in progress):
		// the record decides, as for a run of another process.
	}
	won, err := d.Tasks.MarkNotified(context.WithoutCancel(ctx), id)
	switch {
	case won:
		return Show
	case errors.Is(err, task.ErrNotTerminal):
		// Resumed since the reader read the ended record: that end was
		// delivered by whoever ran it.
		return Already
	case err != nil:
		// Shown twice is better than never, should the store fail.
		return Show
	case d.Queue.Withdraw(id):
		return Show
	}
	return Already
}

// Notify delivers a background run's end through its notification n,
// unless readers are watching the run: they take the end over (handed
// over), and the last of them to leave without claiming it sends n then.
//
// The record's flag is claimed outside the Desk's lock: it is a store
// write, which waits its turn behind other writes (spawns' inserts), and
// every other run's delivery would wait behind it. Meanwhile the run is
// noticeMarking, and a reader of this run waits for the outcome (Claim).
func (d *Desk) Notify(ctx context.Context, t Run, n *Notice) {
	st := t.Delivery()
	d.mu.Lock()
	if st.watchers > 0 {
		st.handedOver = n
		d.mu.Unlock()
		return
	}
	if st.notice != noticeNone {
		d.mu.Unlock()
		return
	}
	st.notice, st.marked = noticeMarking, make(chan struct{})
	d.mu.Unlock()

	won, err := d.Tasks.MarkNotified(ctx, n.Entry.TaskID)

	d.mu.Lock()
	st.notice = noticeNone
	close(st.marked)
	d.marked(ctx, st, n, won, err)
	d.mu.Unlock()
}

// BeginEndClaim reports whether the write that records t's end should
// claim the record's notified flag too: yes unless readers watch the run
// (they take the end over) or one already took it. When yes, t is
// noticeMarking until Ended.
func (d *Desk) BeginEndClaim(t Run) bool {
	st := t.Delivery()
	d.mu.Lock()
	defer d.mu.Unlock()
	if st.watchers > 0 || st.notice != noticeNone {
		return false
	}
	st.notice, st.marked = noticeMarking, make(chan struct{})
	return true
}

// Ended delivers the end of t, a run of this process whose parent is
// here, once the write recording it answered: n is its notification, nil
// when the write failed (then nothing is told, S-L6); first is the
// notification of an end recorded before it, which stands instead.
// claiming and won are the write's claim of the notified flag
// (BeginEndClaim; won: it was not set already).
func (d *Desk) Ended(ctx context.Context, t Run, claiming, won bool, n, first *Notice) {
	if claiming {
		d.endClaimed(ctx, t.Delivery(), n, won)
	} else if n != nil {
		d.Notify(ctx, t, n)
	}
	if first != nil {
		d.Notify(ctx, t, first)
	}
}

// endClaimed delivers n after the write that recorded the end claimed the
// flag; n is nil when that write failed, and then nothing is told (S-L6).
func (d *Desk) endClaimed(ctx context.Context, st *State, n *Notice, won bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st.notice = noticeNone
	close(st.marked)
	if n != nil {
		d.marked(ctx, st, n, won, nil)
	}
}

// post queues n unless the end was delivered already; silent takes the
// flag but queues nothing. d.mu is held.
func (d *Desk) post(ctx context.Context, st *State, n *Notice) {
	if st.notice != noticeNone {
		return
	}
	won, err := d.Tasks.MarkNotified(ctx, n.Entry.TaskID)
	d.marked(ctx, st, n, won, err)
}

// marked finishes post once MarkNotified answered won, err. d.mu is held.
//
// The notification's event is published before its entry is queued: the
// agent it is for may take the entry and answer it at once, and a
// front end must see the task_notification before that turn's lines, not
// after its result.
func (d *Desk) marked(ctx context.Context, st *State, n *Notice, won bool, err error) {
	if err != nil {
		d.Log.WarnContext(ctx, "mark a task notified; notifying all the same", "task_id", n.Entry.TaskID, "err", err)
	}
	if err == nil && !won {
		// A reader in another process showed it.
		st.notice = noticeClaimed
		return
	}
	// A failed mark still notifies: the model must learn how the run
	// ended, and this process's state keeps it from learning twice.
	if n.Silent {
		st.notice = noticeClaimed
		return
	}
	st.notice = noticeQueued
	if n.Event != nil {
		n.Event() // the bus never blocks
	}
	d.Queue.Push(n.Entry)
}

// Watcher is a reader's registration on a run in this process, taken
// before it waits for the run's end: while a run has watchers, its end is
// handed to them instead of notified.
type Watcher struct {
	d    *Desk
	t    Run
	left bool
}

// Watch registers a reader on t; the reader must call Leave, after it
// has claimed the end it saw (if any).
func (d *Desk) Watch(t Run) *Watcher {
	d.mu.Lock()
	defer d.mu.Unlock()
	t.Delivery().watchers++
	return &Watcher{d: d, t: t}
}

// Watchers counts the readers watching t.
func (d *Desk) Watchers(t Run) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return t.Delivery().watchers
}

// Wait waits up to dur for the run's end and reports whether it came; a
// cancelled ctx ends the wait with false. An end decided but not yet
// announced (the run winding down) counts as come.
func (w *Watcher) Wait(ctx context.Context, dur time.Duration) bool {
	timer := time.NewTimer(dur)
	defer timer.Stop()
	select {
	case <-w.t.Done():
		return true
	case <-ctx.Done():
		return false
	case <-timer.C:
	}
	w.d.mu.Lock()
	handed := w.t.Delivery().handedOver != nil
	w.d.mu.Unlock()
	if handed {
		// The run's end was handed over, and Done is about to close.
		<-w.t.Done()
	}
	return handed
}

// Leave ends the registration. The last watcher to leave sends the
// notification it was handed if no reader claimed the result.
func (w *Watcher) Leave() {
	if w.left {
		return
	}
	w.left = true
	d, st := w.d, w.t.Delivery()
	d.mu.Lock()
	st.watchers--
	if st.watchers == 0 && st.handedOver != nil {
		n := st.handedOver
		st.handedOver = nil
		d.post(context.Background(), st, n)
	}
	d.mu.Unlock()
}

// RecordedFirst reads the end another party recorded for task id before
// the run's own end could be (err, the refused event): a sweep that judged
// this process gone, or a later process that took the run over. That end
// stands, and is the one the parent is told (S-L6: what is told is what is
// recorded); ok is false when the record cannot be read.
func (d *Desk) RecordedFirst(ctx context.Context, id string, err error) (rec task.Task, ok bool) {
	rec, gerr := d.Tasks.GetTask(ctx, id)
	if gerr != nil || !rec.Status.Terminal() {
		d.Log.WarnContext(ctx, "record a background task's end; its parent is not notified", "task_id", id, "err", errors.Join(err, gerr))
		return rec, false
	}
	d.Log.WarnContext(ctx, "a background task's end was recorded by another party first; its parent is told of that one", "task_id", id, "status", rec.Status, "err", err)
	return rec, true
}
