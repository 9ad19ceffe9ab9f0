package view

import (
	"strings"

	"github.com/cadre-dev/cadre/record"
)

// Team is the team a main session leads (docs/agents.md, "Teams"): who is
// on it and what they share. Every front end shows this one view.
type Team struct {
	// Name is the team's name: the lead's team_name, else "default".
	// It is "" when the session leads no team in this process.
	Name    string
	Members []Teammate        // in join order
	Tasks   []record.TeamTask // as the runtime's TeamTasks returns them
}

// Teammate is one member of a team.
type Teammate struct {
	// Index is the run's number in the conversation (SubagentRun.Index),
	// 0 before its run was launched.
	Index int
	ID    string // its agent id (= task id = session id); "" while it starts
	Name  string // its SendMessage name
	Agent string // its agent type
	// State is "working", "idle" (its turn ended; a message wakes it) or
	// "ended" (stopped).
	State string
	// Task is the subject of the team task it owns in progress, if any.
	Task   string
	Tokens int64
}

// Numbered is t with each member's run number and tokens taken from runs,
// the conversation's subagent runs as its Subagents lists them.
func (t Team) Numbered(runs []SubagentRun) Team {
	byID := make(map[string]SubagentRun, len(runs))
	for _, run := range runs {
		byID[run.ID] = run
	}
	for i, m := range t.Members {
		if run, ok := byID[m.ID]; ok {
			t.Members[i].Index, t.Members[i].Tokens = run.Index, run.Tokens
		}
	}
	return t
}

// Roster joins a team's members and its task list into the Team a front
// end shows: each member's Task is the subject of the first task it owns
// in progress.
func Roster(name string, members []Teammate, tasks []record.TeamTask) Team {
	working := map[string]string{}
	for _, t := range tasks {
		if t.Status == "in_progress" && t.Owner != "" {
			if _, seen := working[t.Owner]; !seen {
				working[t.Owner] = t.Subject
			}
		}
	}
	for i := range members {
		members[i].Task = working[members[i].Name]
	}
	return Team{Name: name, Members: members, Tasks: tasks}
}

// What a front end draws of a Team beyond its fields: the task list as a
// board, the figures of a status line, and a teammate found by the name a
// user types. The TUI and the web view show the same grouping.

// TeamBoard is a team's task list grouped as a board shows it, each group
// in creation order.
type TeamBoard struct {
	InProgress []record.TeamTask
	// Pending are the tasks that wait for nobody: free to claim, or
	// given to an owner who has not started them.
	Pending []record.TeamTask
	// Blocked are pending tasks still waiting on others (TeamTask.Waiting).
	Blocked   []record.TeamTask
	Completed []record.TeamTask
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
