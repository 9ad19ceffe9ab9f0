package cadre

import (
	"context"
)

// SubagentCosts lists the subagent runs this conversation started, at any
// depth, in start order, with what each has spent so far. Their costs and
// the main agent's own add up to the conversation's total (a run still
// going counts once its turn ends).
func (c *Conversation) SubagentCosts(ctx context.Context) ([]SubagentCost, error) {
	return c.sr.subagentCosts(ctx, false)
}

// subagentCosts reads each run of the conversation's group with what it
// has spent (app.SubagentCosts); sinceLast keeps only the runs whose entry
// changed since the previous call that asked so: what a result lists.
func (sr *sessionRun) subagentCosts(ctx context.Context, sinceLast bool) ([]SubagentCost, error) {
	return sr.r.app.SubagentCosts(ctx, &sr.costs, sr.caller.Group, sr.sess.Info.ID, sinceLast)
}
