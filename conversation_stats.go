package cadre

import "github.com/cadre-dev/cadre/llm"

// ConversationStats is what a conversation's whole run tree has used so
// far, and what it still runs in the background: the figures a status
// line shows.
type ConversationStats struct {
	// Usage and CostUSD add up the main agent and every subagent, at any
	// depth. A run adds its share when its turn ends, so a subagent still
	// running is not in them yet.
	Usage   llm.Usage
	CostUSD float64
	// BackgroundTasks counts the background runs of the tree not yet
	// finished, at any depth.
	BackgroundTasks int
}

// Stats returns the conversation's figures as they are now.
func (c *Conversation) Stats() ConversationStats {
	usage, cost, _ := c.sr.totals.Snapshot()
	return ConversationStats{Usage: usage, CostUSD: cost, BackgroundTasks: c.sr.caller.Group.BackgroundRunning()}
}
