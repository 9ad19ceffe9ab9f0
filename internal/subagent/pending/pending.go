package pending

import (
	"context"

	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/llm"
)

// Pending waits for what reaches one agent while its background runs go
// on (runner.Pending).
type Pending struct {
	Queue *queue.Queue
	// Group holds the agent's background runs.
	Group *runs.Group
	// AgentID is the agent's queue target ("" or a session id for a main
	// agent).
	AgentID string
	// Inbox is the agent's mailbox inbox while it runs, nil without one.
	Inbox func() *mailbox.Inbox
}

// Next returns what reached the agent, waiting for it while a background
// run the agent started goes on; nil once none does, or ctx ends.
func (p Pending) Next(ctx context.Context) []llm.Message {
	for ctx.Err() == nil {
		// Taken before counting, so that a run ending in between wakes
		// the wait below; counted before taking, because a run pushes
		// its notification before it stops counting: one that ends in
		// between is counted or already queued, never neither.
		changed := p.Group.Changed()
		running := p.Group.HasRunning(p.AgentID)
		if es := p.Queue.Take(p.AgentID); len(es) > 0 {
			return queue.Messages(es)
		}
		var in *mailbox.Inbox
		if p.AgentID != "" {
			in = p.Inbox()
		}
		if es := in.Take(ctx); len(es) > 0 {
			return queue.Messages(es)
		}
		if !running {
			return nil
		}
		if in == nil {
			if es, _ := p.Queue.Wait(ctx, p.AgentID, changed); len(es) > 0 {
				return queue.Messages(es)
			}
			continue
		}
		// Messages come from the mailbox too: wait for either.
		queued := p.Queue.Changed()
		if es := p.Queue.Take(p.AgentID); len(es) > 0 {
			return queue.Messages(es)
		}
		select {
		case <-queued:
		case <-changed:
		case <-in.Arrived():
			in.Noted()
		case <-ctx.Done():
		}
	}
	return nil
}
