package view

import "github.com/cadre-dev/cadre/record"

// SessionRow is a session in a listing ordered as a tree.
type SessionRow struct {
	record.Session
	// Depth is 0 for a session whose parent is not listed, 1 for its
	// children, and so on.
	Depth int
}

// SessionRows orders sessions as a tree, as `cadre sessions` and the
// TUI's /resume show them: each session (in the given order) followed by
// its subagents' sessions, depth first; a child whose parent is not
// listed stands on its own.
func SessionRows(sessions []record.Session) []SessionRow {
	listed := map[string]bool{}
	children := map[string][]record.Session{}
	for _, s := range sessions {
		listed[s.ID] = true
	}
	var roots []record.Session
	for _, s := range sessions {
		if s.ParentID != "" && listed[s.ParentID] && s.ParentID != s.ID {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	var rows []SessionRow
	seen := map[string]bool{}
	var walk func(s record.Session, depth int)
	walk = func(s record.Session, depth int) {
		if seen[s.ID] { // a damaged index must not loop
			return
		}
		seen[s.ID] = true
		rows = append(rows, SessionRow{s, depth})
		for _, c := range children[s.ID] {
			walk(c, depth+1)
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	return rows
}
