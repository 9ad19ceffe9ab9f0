package view

import (
	"slices"

	"github.com/cadre-dev/cadre/event"
)

// PermissionModeCycle is the order an interactive front end steps through
// permission modes (Shift+Tab, as in Claude Code): default, acceptEdits,
// plan, then back. A conversation started in another mode
// (bypassPermissions, dontAsk, auto) keeps it in the cycle, after plan, so
// stepping around comes back to it.
func PermissionModeCycle(start event.PermissionMode) []event.PermissionMode {
	cycle := []event.PermissionMode{event.PermissionDefault, event.PermissionAcceptEdits, event.PermissionPlan}
	if start != "" && !slices.Contains(cycle, start) {
		cycle = append(cycle, start)
	}
	return cycle
}

// NextPermissionMode is the mode after current in PermissionModeCycle(start).
func NextPermissionMode(current, start event.PermissionMode) event.PermissionMode {
	cycle := PermissionModeCycle(start)
	i := slices.Index(cycle, current)
	return cycle[(i+1)%len(cycle)]
}
