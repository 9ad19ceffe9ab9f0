// Package screen is the stack of full-screen views of cadre's terminal
// interface (internal/tui): a Screen is pushed over the conversation (the
// session tree, a task's output, the team) and gets every key and the
// whole window while it is on top; Pager is the read-only one.
package screen
