// Package view holds what every front end draws from a runtime's output,
// computed once so that the terminal UI, the web view and a program on
// the SDK show the same thing: Activity (the live picture of a
// conversation's subagent runs, from its events), SessionRows (sessions
// listed as a tree), Team (a lead's roster and task list, and the board
// and figures drawn of them) and the permission-mode cycle of Shift+Tab.
//
// It builds on the public vocabulary (packages event and record) alone;
// the SDK (package cadre) re-exports its names with aliases.
package view
