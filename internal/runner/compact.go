package runner

import (
	"context"
	"errors"
	"math"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
)

// ErrCompactionOff is returned by Compact when the conversation's loop
// has no compaction (the settings' compaction.disabled).
var ErrCompactionOff = errors.New("context compaction is turned off (compaction.disabled in the settings)")

// Compact summarises the conversation now, whatever its size (the user's
// /compact), with the compaction its loop uses (the same summary call and
// PreCompact hooks), and records the summary as the loop would, with a
// manual trigger. It returns how many messages the summary replaced: 0
// when there is nothing older than the recent turns to summarise.
func (c *Conversation) Compact(ctx context.Context) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	cfg := c.spec.Loop
	if cfg.Compact == nil {
		return 0, ErrCompactionOff
	}
	pre := c.measured.Context(c.history)
	// The loop's hook compacts when the last context passed its threshold:
	// a context larger than any window makes it compact now.
	msgs, summary, err := cfg.Compact(context.WithValue(ctx, manualKey{}, true), c.history, llm.Usage{InputTokens: math.MaxInt32})
	if err != nil || summary == nil {
		return 0, err
	}
	replaced := len(c.history) - (len(msgs) - 1)
	if err := c.rec.record(loop.Step{Message: *summary, Compaction: true, Kept: msgs[1:], PreTokens: pre.Total(), Manual: true}, true); err != nil {
		return 0, err
	}
	c.history = msgs
	// What was measured were the messages the summary replaced.
	c.measured = loop.Measured{}
	return replaced, nil
}
