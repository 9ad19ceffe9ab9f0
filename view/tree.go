package view

import "github.com/cadre-dev/cadre/record"

// The session tree (DESIGN S-I4, OpenCode's parent/child navigation): a
// session with its parent, children and siblings, for the TUI's tree
// screen and any other front end.

// SessionNode is a session in a tree, with the description of the call
// that started it (a subagent's; "" when unknown, as for a main session).
type SessionNode struct {
	record.Session
	Description string
}

// SessionTree is a session's place in its tree.
type SessionTree struct {
	Session SessionNode
	// Parent is the session whose agent started it; nil for a main
	// session.
	Parent *SessionNode
	// Children are the sessions its agent started, oldest first.
	Children []SessionNode
	// Siblings are the parent's children, oldest first, this session
	// included at Position; a main session is its own only sibling.
	Siblings []SessionNode
	Position int
}
