package cadre

// InTurn reports whether the main agent is in a turn now: answering a
// message or its subagents' notifications. Between turns an open
// conversation is idle (its background subagents may still run), which a
// front end shows as such rather than as running.
func (c *Conversation) InTurn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turn != nil
}
