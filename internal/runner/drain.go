package runner

import (
	"context"

	"github.com/cadre-dev/cadre/llm"
)

// Pending is where an agent's later input comes from while a headless
// conversation goes on: the notifications of its background runs and the
// messages sent to it (S-Q2).
type Pending interface {
	// Next returns the input waiting for the agent. When none waits it
	// waits for some, as long as any of the agent's background runs goes
	// on; it returns nil once nothing waits and none runs, or when ctx
	// ends.
	Next(ctx context.Context) []llm.Message
}

// Drain runs turns until the agent has nothing left to answer: input
// first, then whatever pending brings, one turn each, until a turn fails,
// ctx ends or pending has nothing more. after, if set, sees each turn's
// result. It returns the last turn's.
func (c *Conversation) Drain(ctx context.Context, input []llm.Message, pending Pending, after func(*Result)) *Result {
	res := c.Turn(ctx, input...)
	if after != nil {
		after(res)
	}
	for ctx.Err() == nil && res.Err == nil && pending != nil {
		next := pending.Next(ctx)
		if len(next) == 0 {
			break
		}
		res = c.Turn(ctx, next...)
		if after != nil {
			after(res)
		}
	}
	return res
}
