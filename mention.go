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

// PermissionModeCycle is the order an interactive front end steps through
// permission modes (Shift+Tab, as in Claude Code): default, acceptEdits,
// plan, then back. A conversation started in another mode
// (bypassPermissions, dontAsk, auto) keeps it in the cycle, after plan, so
// stepping around comes back to it.
func PermissionModeCycle(start PermissionMode) []PermissionMode {
	cycle := []PermissionMode{PermissionDefault, PermissionAcceptEdits, PermissionPlan}
	if start != "" && !slices.Contains(cycle, start) {
		cycle = append(cycle, start)
	}
	return cycle
}

// NextPermissionMode is the mode after current in PermissionModeCycle(start).
func NextPermissionMode(current, start PermissionMode) PermissionMode {
	cycle := PermissionModeCycle(start)
	i := slices.Index(cycle, current)
	return cycle[(i+1)%len(cycle)]
}
