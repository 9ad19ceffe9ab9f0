package approval

import (
	"context"
	"slices"
	"sync"
)

// Approvals queues the permission requests of a conversation tree for a
// front end that answers them one at a time, as a person does: its Ask is
// the conversation's Func; the front end watches Changed, shows
// Pending()[0], and Answers it. Parallel requests (subagents at any depth,
// parallel calls) wait in the order they came. A request whose caller
// gives up (its context ends: the turn was interrupted, the subagent
// stopped) leaves the queue and is denied, so no caller ever hangs on a
// question nobody will see. It is safe for concurrent use.
type Approvals struct {
	mu      sync.Mutex
	next    uint64
	pending []*approval
	changed chan struct{} // closed and replaced on every change
}

// Approval is one request waiting for an answer.
type Approval struct {
	// ID names the request for Answer.
	ID      uint64
	Request Request
}

type approval struct {
	Approval
	answer chan Decision // buffered: Answer never blocks
}

// NewApprovals returns an empty queue.
func NewApprovals() *Approvals {
	return &Approvals{changed: make(chan struct{})}
}

// Ask queues req and waits for its answer, or for ctx to end (a denial
// saying so). It is a Func.
func (a *Approvals) Ask(ctx context.Context, req Request) (Decision, error) {
	a.mu.Lock()
	a.next++
	p := &approval{Approval: Approval{ID: a.next, Request: req}, answer: make(chan Decision, 1)}
	a.pending = append(a.pending, p)
	a.changedLocked()
	a.mu.Unlock()
	select {
	case d := <-p.answer:
		return d, nil
	case <-ctx.Done():
		a.mu.Lock()
		a.remove(p.ID)
		a.mu.Unlock()
		// Answered just before the caller gave up: the answer stands.
		select {
		case d := <-p.answer:
			return d, nil
		default:
		}
		return Decision{Message: "The permission request was cancelled before anyone answered it."}, nil
	}
}

// Pending are the requests waiting, oldest first.
func (a *Approvals) Pending() []Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Approval, len(a.pending))
	for i, p := range a.pending {
		out[i] = p.Approval
	}
	return out
}

// Changed is closed at the next change of Pending.
func (a *Approvals) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

// Answer answers the request id; it reports false when that request is no
// longer waiting (answered already, or its caller gave up).
func (a *Approvals) Answer(id uint64, d Decision) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.remove(id)
	if p == nil {
		return false
	}
	p.answer <- d
	return true
}

// remove takes the request id out of the queue and returns it (nil when it
// is not there). a.mu is held.
func (a *Approvals) remove(id uint64) *approval {
	i := slices.IndexFunc(a.pending, func(p *approval) bool { return p.ID == id })
	if i < 0 {
		return nil
	}
	p := a.pending[i]
	a.pending = slices.Delete(a.pending, i, i+1)
	a.changedLocked()
	return p
}

func (a *Approvals) changedLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}
