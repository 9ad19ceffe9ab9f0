package cadre

import "github.com/cadre-dev/cadre/llm"

// ConversationStats is what a conversation's whole run tree has used so
// far, and what it still runs in the background: the figures a status
// line shows.
type ConversationStats struct {
	// Usage and CostUSD add up the main agent and every subagent, at any
	// depth, turns still running included, reply by reply (the result
	// events' totals count a turn once it has ended).
	Usage   llm.Usage
	CostUSD llm.Cost
	// BackgroundTasks counts the background runs of the tree not yet
	// finished, at any depth.
	BackgroundTasks int
}

// Stats returns the conversation's figures as they are now.
func (c *Conversation) Stats() ConversationStats {
	usage, cost := c.sr.totals.Live()
	return ConversationStats{Usage: usage, CostUSD: cost, BackgroundTasks: c.sr.caller.Group.BackgroundRunning()}
}
