package cadre

import (
	"github.com/cadre-dev/cadre/view"
)

// What front ends draw (package view), under the SDK's names.
type (
	// Activity follows a conversation's events and keeps what its
	// subagent runs are doing, at any depth (view.Activity).
	Activity = view.Activity
	// ActivityCall is one tool call an agent made.
	ActivityCall = view.ActivityCall
	// ActivityRun is one subagent run of a conversation as its events
	// show it.
	ActivityRun = view.ActivityRun
	// SessionRow is a session in a listing ordered as a tree.
	SessionRow = view.SessionRow
)

// NewActivity returns an empty Activity.
func NewActivity() *Activity { return view.NewActivity() }

// SessionRows orders sessions as a tree, as `cadre sessions` and the
// TUI's /resume show them (view.SessionRows).
func SessionRows(sessions []Session) []SessionRow { return view.SessionRows(sessions) }

// PermissionModeCycle is the order an interactive front end steps through
// permission modes (Shift+Tab, as in Claude Code; view.PermissionModeCycle).
func PermissionModeCycle(start PermissionMode) []PermissionMode {
	return view.PermissionModeCycle(start)
}

// NextPermissionMode is the mode after current in PermissionModeCycle(start).
func NextPermissionMode(current, start PermissionMode) PermissionMode {
	return view.NextPermissionMode(current, start)
}
