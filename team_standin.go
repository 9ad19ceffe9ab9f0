package cadre

// STAND-IN: the lead's team.go replaces this file (board helper builds
// against the announced shape until then); deleted on merging main.

import (
	"context"
)

// Team returns the team a main session leads: its roster and its task list.
func (r *Runtime) Team(ctx context.Context, sessionID string) (Team, error) {
	tasks, err := r.TeamTasks(ctx, sessionID)
	if err != nil {
		return Team{}, err
	}
	recs, err := r.Tasks(ctx, sessionID, 1000)
	if err != nil {
		return Team{}, err
	}
	t := Team{Tasks: tasks, Members: []Teammate{}}
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		if rec.Name == "" {
			continue
		}
		state := "ended"
		switch rec.Status {
		case TaskRunning, TaskPending:
			state = "working"
		case TaskCompleted:
			state = "idle"
		}
		t.Members = append(t.Members, Teammate{ID: rec.ID, Name: rec.Name, Agent: rec.Agent, State: state, Task: ownedTask(tasks, rec.Name), Tokens: rec.Usage.Total()})
	}
	return t, nil
}

// Team is the conversation's own session's team.
func (c *Conversation) Team(ctx context.Context) (Team, error) {
	t, err := c.r.Team(ctx, c.target)
	if err != nil {
		return t, err
	}
	subs, err := c.Subagents(ctx)
	if err != nil {
		return t, err
	}
	idx := map[string]int{}
	for _, s := range subs {
		idx[s.ID] = s.Index
	}
	for i := range t.Members {
		t.Members[i].Index = idx[t.Members[i].ID]
	}
	return t, nil
}

func ownedTask(tasks []TeamTask, name string) string {
	for _, t := range tasks {
		if t.Owner == name && t.Status == "in_progress" {
			return t.Subject
		}
	}
	return ""
}

type Team struct {
	Members []Teammate // in join order
	Tasks   []TeamTask // as TeamTasks returns them (existing type, teamtasks.go)
}
type Teammate struct {
	Index  int    // the run's number in the conversation (as SubagentRun.Index)
	ID     string // its agent id (= task id = session id)
	Name   string // its SendMessage name
	Team   string // its team_name ("" for the session's implicit team)
	Agent  string // its agent type
	State  string // "working", "idle" or "ended"
	Task   string // the subject of the task it owns in_progress, if any
	Tokens int64
}
