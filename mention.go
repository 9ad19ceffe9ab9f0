package cadre

import (
	"slices"
	"strings"
)

// MentionableAgents are the names an interactive "@name text" may name and
// complete: the subagents in effect, sorted, without hidden ones (still
// callable, never offered) and without main-agent-only ones.
func (r *Runtime) MentionableAgents() []string {
	var out []string
	for _, e := range r.Agents() {
		if !e.Active || e.Err != nil || e.Agent.Hidden || e.Agent.Mode == AgentModePrimary {
			continue
		}
		out = append(out, e.Agent.Name)
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return slices.Compact(out)
}
