package cadre

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
)

// Compact queues a compaction of the conversation (the TUI's /compact): in
// a turn of its own, after the turns queued before it, the older messages
// are replaced by a summary, written by the same compaction the loop runs
// when the context nears the model's window, whatever the context's size
// now. The turn's result says how many messages the summary replaced; it
// is an error when there was nothing older to compact, or compaction is
// off. A compact_boundary event (trigger "manual") carries the summary.
func (c *Conversation) Compact(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.r.app.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeCompact, Target: c.target})
	return nil
}

// compactTurn is the turn of a Compact entry.
func compactTurn(ctx context.Context, conv *runner.Conversation) *runner.Result {
	n, err := conv.Compact(ctx)
	out := &loop.Outcome{Subtype: loop.SubtypeSuccess, Messages: conv.History()}
	switch {
	case err != nil:
		out.Subtype, out.Err = loop.SubtypeExecution, fmt.Errorf("compact the conversation: %w", err)
		return &runner.Result{Outcome: out, Status: session.StatusFailed}
	case n == 0:
		// An error, as Claude Code's /compact says it: the user asked for
		// something that did not happen.
		out.Subtype, out.Err = loop.SubtypeExecution, errors.New("not enough messages to compact yet: the conversation is no longer than the recent turns compaction keeps")
		return &runner.Result{Outcome: out, Status: session.StatusCompleted}
	default:
		out.Result = fmt.Sprintf("Compacted the conversation: a summary replaced %d older messages.", n)
	}
	return &runner.Result{Outcome: out, Status: session.StatusCompleted}
}
