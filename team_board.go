package cadre

import "strings"

// What a front end draws of a Team beyond its fields: the task list as a
// board, the figures of a status line, and a teammate found by the name a
// user types. The TUI and the web view show the same grouping.

// TeamBoard is a team's task list grouped as a board shows it, each group
// in creation order.
type TeamBoard struct {
	InProgress []TeamTask
	// Pending are the tasks that wait for nobody: free to claim, or
	// given to an owner who has not started them.
	Pending []TeamTask
	// Blocked are pending tasks still waiting on others (TeamTask.Waiting).
	Blocked   []TeamTask
	Completed []TeamTask
}

// Board groups the team's tasks by status.
func (t Team) Board() TeamBoard {
	var b TeamBoard
	for _, task := range t.Tasks {
		switch {
		case task.Status == "in_progress":
			b.InProgress = append(b.InProgress, task)
		case task.Status == "completed":
			b.Completed = append(b.Completed, task)
		case len(task.Waiting) > 0:
			b.Blocked = append(b.Blocked, task)
		default:
			b.Pending = append(b.Pending, task)
		}
	}
	return b
}

// TeamCounts are a team's figures at a glance.
type TeamCounts struct {
	// Working, Idle and Ended count the teammates by State.
	Working, Idle, Ended int
	// Tasks counts the task list; Done the completed ones.
	Tasks, Done int
}

// Counts are the team's figures for a status line.
func (t Team) Counts() TeamCounts {
	var c TeamCounts
	for _, m := range t.Members {
		switch m.State {
		case "working":
			c.Working++
		case "idle":
			c.Idle++
		default:
			c.Ended++
		}
	}
	c.Tasks = len(t.Tasks)
	for _, task := range t.Tasks {
		if task.Status == "completed" {
			c.Done++
		}
	}
	return c
}

// Member is the teammate a user names: by its name (in any case, as
// SendMessage takes it) or its agent id.
func (t Team) Member(name string) (Teammate, bool) {
	for _, m := range t.Members {
		if strings.EqualFold(m.Name, name) || (m.ID != "" && m.ID == name) {
			return m, true
		}
	}
	return Teammate{}, false
}
