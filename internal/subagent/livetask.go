package subagent

import (
	"context"
	"sync"

	"github.com/cadre-dev/cadre/internal/lane"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
)

// liveTask is a child run in this process, foreground or background: the
// registry's run (runs.Live: what it is, its phase, output and figures)
// and what only its execution here keeps.
type liveTask struct {
	*runs.Live

	// elsewhere marks the stand-in of a run dispatched to another node
	// (dispatch.go); detached marks a dispatched run executing here,
	// whose parent is in another process: its end is recorded, and the
	// stand-in delivers it.
	elsewhere, detached bool

	// laneHeld says the run holds its lane slot: launch took it and
	// recorded the run running in the same write as its start, or the
	// lane handed it one (start); execute gives it back.
	laneHeld bool
	// inbox is the run's side of the Mailbox (nil without one): opened
	// at launch, closed by execute at the run's end.
	inbox *mailbox.Inbox
	// sessionEnd is the child session's end, held back by the session
	// (session.Session.Hold) for finish to write together with the
	// task's (records/); nil when the session recorded it itself.
	sessionEnd func(*session.Info) error
	// sess is the child session whose end sessionEnd holds: once that is
	// written, its Info is the record as stored.
	sess *session.Session
	// announced is the normalised announce text (subagents.announce:
	// summarize); skip is set when the child declined with ANNOUNCE_SKIP.
	announced string
	skip      bool

	mu sync.Mutex
	// tree is what became of the run's worktree, if it had one.
	tree *worktree.Outcome
	// slot is the lane place of a run moved to the background.
	slot *lane.Slot

	// delivery is how far the delivery of the run's end got
	// (internal/subagent/deliver), under the service's Desk.
	delivery deliver.State
}

// Delivery is the state of the delivery of the run's end (deliver.Run).
func (t *liveTask) Delivery() *deliver.State { return &t.delivery }

// timedOut is runs.Live.TimedOut, for a run that may be nil.
func (t *liveTask) timedOut() (error, bool) {
	if t == nil {
		return nil, false
	}
	return t.TimedOut()
}

// worktree returns what became of the run's worktree (nil without one).
func (t *liveTask) worktree() *worktree.Outcome {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tree
}

// endSession finishes a child session whose run ended before it could
// finish it itself (a failed start, a run stopped in the lane). A failure is
// logged, not returned: the caller already holds the error that matters.
func (s *Service) endSession(ctx context.Context, sess *session.Session, status session.Status) {
	if err := sess.Finish(context.WithoutCancel(ctx), status, llm.Usage{}, llm.Cost{}, 0); err != nil {
		s.log.WarnContext(ctx, "record the end of a child session", "session_id", sess.Info.ID, "status", status, "err", err)
	}
}
