package cadre

import (
	"fmt"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
)

// SetMaxThinkingTokens sets the main agent's extended-thinking budget from
// its next model call on: a positive budget turns thinking on with it, 0
// turns it off, nil goes back to Options.Thinking. Subagents keep theirs.
func (c *Conversation) SetMaxThinkingTokens(budget *int64) error {
	if budget != nil && *budget < 0 {
		return fmt.Errorf("thinking budget %d: want 0 (off) or more", *budget)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if budget == nil {
		c.thinking = nil
		return nil
	}
	c.thinking = &llm.Thinking{BudgetTokens: *budget}
	return nil
}

// ContextUsage is how full the main agent's context window is, as of its
// last reply.
type ContextUsage struct {
	// Model is the full name of the model the next call uses.
	Model string
	// Tokens is what the last reply's request held (input, cache reads
	// and cache writes); 0 before the first reply.
	Tokens int64
	// Window is the model's context window.
	Window int64
	// LastReply is that reply's usage; nil before the first reply.
	LastReply *llm.Usage
}

// ContextUsage returns the main agent's context use as its last reply
// reported it: what a /context view or the Agent SDK's getContextUsage
// shows.
func (c *Conversation) ContextUsage() ContextUsage {
	model, ref := c.current()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := ContextUsage{Model: model.Name(), Window: compact.Window(ref.Model)}
	if u := c.lastUsage; u != nil {
		last := *u
		out.LastReply = &last
		out.Tokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	}
	return out
}

// AllowRules adds allow rules, in permission-rule syntax, to this
// conversation's remembered rules — as a person's "allow for the rest of
// the session" does: its main agent and every subagent, deny and ask rules
// still first. A rule that does not parse adds none.
func (c *Conversation) AllowRules(rules ...string) error {
	return c.remembered.Add(rules...)
}
