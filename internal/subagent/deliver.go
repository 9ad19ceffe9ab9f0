package subagent

import (
	"context"
	"errors"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
)

// A run's result reaches the model once (S-N1). This file is the only
// place that decides who shows it: a run's end goes out through notice,
// and every reader of every profile through one read sequence (reading, at
// the end of the file: read, await, claim, close); none reads the state
// below itself.
//
// Who may deliver how a run ended:
//   - the spawn call that waits for the run in the foreground: the result
//     is its reply (Agent, task, agent_spawn, agent_send resuming an agent,
//     a fork command);
//   - the run's notification, queued for the agent that started it, when
//     the run ended in the background;
//   - a reader: a tool that shows the model how a run ended — TaskOutput
//     (claude profile), task_output, wait_async_results and agent_send's
//     wait (harness profile). The gateway's sessions_spawn is only ever
//     notified, and OpenCode's task always waits in the foreground.
//
// What wins:
//   - A run that ended in the foreground belongs to its spawn call, always.
//     A reader that watched it end shows its status and says where the
//     result went (deliveredToSpawner); it never shows the result.
//   - A run that ended in the background goes to the first of its
//     notification and its readers. In this process the run's own state
//     (liveTask.notice, under Service.delivery) decides; against other
//     processes sharing the store, the task record's notified flag
//     (task.Store.MarkNotified) does. A reader that comes second shows the
//     result only if it can withdraw the notification still queued (the
//     agent has not read it yet); otherwise it says the result was already
//     delivered (alreadyDelivered).
//   - Readers that are watching a run when it ends in the background take
//     its end over: the notification is not sent, and no task_notification
//     line is published, unless the last of them leaves without claiming
//     the result (its call was cancelled), which sends it then. So a
//     watcher that sees the end must claim it before it leaves.

// noticeState is how far a background run's end has been delivered.
type noticeState int

const (
	noticeNone    noticeState = iota // nobody has delivered it yet
	noticeMarking                    // the notification is claiming the record's flag (liveTask.marked)
	noticeQueued                     // the notification waits in the queue, or was read
	noticeClaimed                    // a reader showed it, or an ANNOUNCE_SKIP took it silently
)

// Delivery is what a reader may show of a run that ended.
type Delivery int

const (
	// DeliverShow: this reader delivers the result.
	DeliverShow Delivery = iota
	// deliveredAlready: the notification, or another reader, delivered it.
	deliveredAlready
	// deliveredToSpawner: the run ended in the foreground; its result is
	// the reply of the call that started it.
	deliveredToSpawner
)

// Note is what a reader says instead of a result it must not show ("" for
// DeliverShow).
func (d Delivery) Note() string {
	switch d {
	case deliveredAlready:
		return alreadyDelivered
	case deliveredToSpawner:
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

// pendingNotice is a run's notification, built when the run ends and sent
// by finish, or later by the last watcher to leave without the result.
type pendingNotice struct {
	entry  queue.Entry
	silent bool   // ANNOUNCE_SKIP: take the flag, queue nothing
	event  func() // publishes the task_notification line once it is queued
}

// claim decides whether a reader about to show how task id ended shows the
// result (see the top of this file). t is the run the reader watched or
// found in this process, nil when it has none (the run ended before the
// reader looked, or runs in another process).
func (s *Service) claim(ctx context.Context, id string, t *liveTask) Delivery {
	s.delivery.Lock()
	defer s.delivery.Unlock()
	for t != nil && t.notice == noticeMarking {
		// The run's notification is claiming the record's flag, a store
		// write: what it gets decides, so wait for it (notice).
		marked := t.marked
		s.delivery.Unlock()
		<-marked
		s.delivery.Lock()
	}
	if t != nil {
		p := t.Phase()
		ended, background := p.Ended(), p.Background()
		if ended && !background {
			return deliveredToSpawner
		}
		if ended {
			switch t.notice {
			case noticeClaimed:
				return deliveredAlready
			case noticeQueued:
				if s.cfg.Queue.Withdraw(id) {
					t.notice = noticeClaimed
					return DeliverShow
				}
				return deliveredAlready
			}
			// The record arbitrates against readers in other processes.
			// A failed mark (a store error, or the record reset by a
			// resume since) leaves this process's state to decide: nobody
			// here delivered this end.
			won, err := s.cfg.Tasks.MarkNotified(context.WithoutCancel(ctx), id)
			if err != nil || won {
				t.notice = noticeClaimed
				return DeliverShow
			}
			return deliveredAlready
		}
		// Not this run's end (a record older than the run in progress):
		// the record decides, as for a run of another process.
	}
	won, err := s.cfg.Tasks.MarkNotified(context.WithoutCancel(ctx), id)
	switch {
	case won:
		return DeliverShow
	case errors.Is(err, task.ErrNotTerminal):
		// Resumed since the reader read the ended record: that end was
		// delivered by whoever ran it.
		return deliveredAlready
	case err != nil:
		// Shown twice is better than never, should the store fail.
		return DeliverShow
	case s.cfg.Queue.Withdraw(id):
		return DeliverShow
	}
	return deliveredAlready
}

// notice delivers a background run's end through its notification, unless
// readers are watching the run: they take the end over (handedOver), and
// the last of them to leave without claiming it sends n then.
//
// The record's flag is claimed outside Service.delivery: it is a store
// write, which waits its turn behind other writes (spawns' inserts), and
// every other run's delivery would wait behind it. Meanwhile the run is
// noticeMarking, and a reader of this run waits for the outcome (claim).
func (s *Service) notice(ctx context.Context, t *liveTask, n *pendingNotice) {
	s.delivery.Lock()
	if t.watchers > 0 {
		t.handedOver = n
		s.delivery.Unlock()
		return
	}
	if t.notice != noticeNone {
		s.delivery.Unlock()
		return
	}
	t.notice, t.marked = noticeMarking, make(chan struct{})
	s.delivery.Unlock()

	won, err := s.cfg.Tasks.MarkNotified(ctx, t.ID)

	s.delivery.Lock()
	t.notice = noticeNone
	close(t.marked)
	sent := s.marked(ctx, t, n, won, err)
	s.delivery.Unlock()
	if sent && n.event != nil {
		n.event()
	}
}

// beginEndClaim reports whether the write that records t's end (finish)
// should claim the record's notified flag too: yes unless readers watch
// the run (they take the end over) or one already took it. When yes, t is
// noticeMarking until endClaimed.
func (s *Service) beginEndClaim(t *liveTask) bool {
	s.delivery.Lock()
	defer s.delivery.Unlock()
	if t.watchers > 0 || t.notice != noticeNone {
		return false
	}
	t.notice, t.marked = noticeMarking, make(chan struct{})
	return true
}

// endClaimed delivers n after the write that recorded t's end claimed the
// flag (won: it was not set already); n is nil when that write failed, and
// then nothing is told (S-L6).
func (s *Service) endClaimed(ctx context.Context, t *liveTask, n *pendingNotice, won bool) {
	s.delivery.Lock()
	t.notice = noticeNone
	close(t.marked)
	sent := n != nil && s.marked(ctx, t, n, won, nil)
	s.delivery.Unlock()
	if sent && n.event != nil {
		n.event()
	}
}

// post queues n unless the end was delivered already; silent takes the
// flag but queues nothing. s.delivery is held. It reports whether a
// notification went out.
func (s *Service) post(ctx context.Context, t *liveTask, n *pendingNotice) bool {
	if t.notice != noticeNone {
		return false
	}
	won, err := s.cfg.Tasks.MarkNotified(ctx, t.ID)
	return s.marked(ctx, t, n, won, err)
}

// marked finishes post once MarkNotified answered won, err. s.delivery is
// held.
func (s *Service) marked(ctx context.Context, t *liveTask, n *pendingNotice, won bool, err error) bool {
	if err != nil {
		s.log.WarnContext(ctx, "mark a task notified; notifying all the same", "task_id", t.ID, "err", err)
	}
	if err == nil && !won {
		// A reader in another process showed it.
		t.notice = noticeClaimed
		return false
	}
	// A failed mark still notifies: the model must learn how the run
	// ended, and this process's state keeps it from learning twice.
	if n.silent {
		t.notice = noticeClaimed
		return false
	}
	t.notice = noticeQueued
	s.cfg.Queue.Push(n.entry)
	return true
}

// watcher is a reader's registration on a run in this process, taken
// before it waits for the run's end: while a run has watchers, its end is
// handed to them instead of notified.
type watcher struct {
	s    *Service
	t    *liveTask
	left bool
}

// watch registers a reader on t; the reader must call leave, after it
// has claimed the end it saw (if any).
func (s *Service) watch(t *liveTask) *watcher {
	s.delivery.Lock()
	defer s.delivery.Unlock()
	t.watchers++
	return &watcher{s: s, t: t}
}

// wait waits up to d for the run's end and reports whether it came; a
// cancelled ctx ends the wait with false. An end decided but not yet
// announced (the run winding down) counts as come.
func (w *watcher) wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-w.t.Done():
		return true
	case <-ctx.Done():
		return false
	case <-timer.C:
	}
	w.s.delivery.Lock()
	handed := w.t.handedOver != nil
	w.s.delivery.Unlock()
	if handed {
		// finish handed the end over and is about to close done.
		<-w.t.Done()
	}
	return handed
}

// leave ends the registration. The last watcher to leave sends the
// notification it was handed if no reader claimed the result.
func (w *watcher) leave() {
	if w.left {
		return
	}
	w.left = true
	s, t := w.s, w.t
	s.delivery.Lock()
	t.watchers--
	var n *pendingNotice
	if t.watchers == 0 && t.handedOver != nil {
		n, t.handedOver = t.handedOver, nil
	}
	sent := n != nil && s.post(context.Background(), t, n)
	s.delivery.Unlock()
	if sent && n.event != nil {
		n.event()
	}
}

// Reading is one reader's look at a task, from the moment it finds the
// task to the moment it has shown what it saw: the one read sequence
// every reader goes through (TaskOutput, task_output, wait_async_results,
// agent_send's wait), so that they cannot differ in how they deliver:
//
//	r, err := s.Read(ctx, id) // find the task and watch its run
//	defer r.Close()           // stop watching, once shown
//	err = r.Await(ctx, d)     // if the reader blocks: its end, or d
//	d := r.Claim(ctx)         // who delivers the end it saw
//
// then show r.Record() (and r.OutputTail while it goes on), or d.Note()
// instead of a result it must not show.
type Reading struct {
	s  *Service
	id string
	// watched is the run in this process the reader watches (nil: none
	// when it looked); it decides the claim, even once the run is over.
	watched *liveTask
	w       *watcher
	lt      *liveTask // the run as last read: nil once it is over
	rec     task.Task
}

// Read finds task id — its run in this process, its record, or a
// foreground run's description — and watches the run, if there is one,
// until close: a run that ends meanwhile hands its end to the reader
// rather than notifying (watch).
func (s *Service) Read(ctx context.Context, id string) (*Reading, error) {
	lt, rec, err := s.findKnown(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	r := &Reading{s: s, id: rec.ID, watched: lt, lt: lt, rec: rec}
	if lt != nil {
		r.w = s.watch(lt)
	}
	return r, nil
}

// readLive is read of a run the reader holds already (agent_send waiting
// for the agent its message went to), not yet known to have ended.
func (s *Service) readLive(lt *liveTask) *Reading {
	return &Reading{s: s, id: lt.ID, watched: lt, w: s.watch(lt), lt: lt,
		rec: task.Task{ID: lt.ID, Kind: lt.TaskKind(), Status: task.StatusRunning}}
}

// Await waits up to d for the task to end, unless it has, then reads it
// again: the record, or for a run that ended in the foreground (it leaves
// none) what the run says of itself. The error is the context's when the
// wait was cancelled, else the read's.
func (r *Reading) Await(ctx context.Context, d time.Duration) error {
	if r.Ended() {
		return nil
	}
	if _, err := r.s.awaitEnd(ctx, r.id, r.w, d); err != nil && ctx.Err() != nil {
		return err
	}
	return r.Refresh(ctx)
}

// Refresh reads the task again; on an error the last reading stands.
func (r *Reading) Refresh(ctx context.Context) error {
	lt, rec, err := r.s.findKnown(ctx, r.id, r.watched)
	if err != nil {
		return err
	}
	r.lt, r.rec = lt, rec
	return nil
}

// Ended reports whether the task had Ended when last read.
func (r *Reading) Ended() bool { return r.rec.Status.Terminal() }

// Record is the task as last read.
func (r *Reading) Record() task.Task { return r.rec }

// Claim decides what the reader may show of the end it saw (deliver.go's
// rules); of a task still going there is no end to deliver, and its
// output so far is shown (DeliverShow).
func (r *Reading) Claim(ctx context.Context) Delivery {
	if !r.Ended() {
		return DeliverShow
	}
	return r.s.claim(ctx, r.id, r.watched)
}

// Close stops watching the run; the reader has claimed the end it saw, if
// any (watcher.leave). Calling it again does nothing.
func (r *Reading) Close() {
	if r.w != nil {
		r.w.leave()
	}
}
