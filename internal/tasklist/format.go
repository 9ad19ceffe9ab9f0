package tasklist

import (
	"fmt"
	"strings"
)

// Text renders the list for the model as TaskList does: one line an item,
// "#1 [pending] Subject (owner) [blocked by #2]", or "No tasks found".
func (l List) Text() string {
	if len(l.Items) == 0 {
		return "No tasks found"
	}
	var b strings.Builder
	for i, it := range l.Items {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "#%s [%s] %s", it.ID, it.Status, it.Subject)
		if it.Owner != "" {
			fmt.Fprintf(&b, " (%s)", it.Owner)
		}
		if open := l.Blockers(it); len(open) > 0 {
			fmt.Fprintf(&b, " [blocked by %s]", hashList(open))
		}
	}
	return b.String()
}

// Text renders one item for TaskGet.
func (it Item) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task #%s: %s\nStatus: %s\n", it.ID, it.Subject, it.Status)
	if it.Owner != "" {
		fmt.Fprintf(&b, "Owner: %s\n", it.Owner)
	}
	if len(it.BlockedBy) > 0 {
		fmt.Fprintf(&b, "Blocked by: %s\n", hashList(it.BlockedBy))
	}
	if len(it.Blocks) > 0 {
		fmt.Fprintf(&b, "Blocks: %s\n", hashList(it.Blocks))
	}
	fmt.Fprintf(&b, "Description: %s", it.Description)
	return b.String()
}
