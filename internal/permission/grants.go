package permission

import (
	"slices"
	"sync"
)

// Grants are allow rules a session gained while it runs: a skill's
// allowed-tools, granted when the model invokes the skill, as Claude Code
// does. They are added to the policy's allow rules for that session only;
// deny and ask rules, protected paths and the mode still come first, as
// for any allow rule. Safe for concurrent use; the zero value is empty.
type Grants struct {
	mu  sync.Mutex
	out map[string][]Rule
}

// Add grants rules to the session.
func (g *Grants) Add(sessionID string, rules ...Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.out == nil {
		g.out = map[string][]Rule{}
	}
	g.out[sessionID] = append(g.out[sessionID], rules...)
}

// Clear takes back everything granted to the session (a new turn starts).
func (g *Grants) Clear(sessionID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.out, sessionID)
}

// Rules are the session's grants.
func (g *Grants) Rules(sessionID string) []Rule {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.out[sessionID])
}
