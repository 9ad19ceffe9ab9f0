package cadre

import (
	"context"

	"github.com/cadre-dev/cadre/internal/session"
)

// Team is the team a main session leads (docs/agents.md, "Teams"): who is
// on it and what they share. Every front end shows this one view.
type Team struct {
	// Name is the team's name: the lead's team_name, else "default".
	// It is "" when the session leads no team in this process.
	Name    string
	Members []Teammate // in join order
	Tasks   []TeamTask // as TeamTasks returns them
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

// Team returns the team the main session sessionID leads: its roster
// (known to the process running the session) and its task list (from the
// store, so any process sharing it sees the same).
func (r *Runtime) Team(ctx context.Context, sessionID string) (Team, error) {
	tasks, err := r.TeamTasks(ctx, sessionID)
	if err != nil {
		return Team{}, err
	}
	out := Team{Tasks: tasks}
	name, members, ok := r.app.Subagents.Roster(ctx, sessionID)
	if !ok {
		return out, nil
	}
	out.Name = name
	working := map[string]string{}
	for _, t := range tasks {
		if t.Status == "in_progress" && t.Owner != "" {
			if _, seen := working[t.Owner]; !seen {
				working[t.Owner] = t.Subject
			}
		}
	}
	for _, m := range members {
		out.Members = append(out.Members, Teammate{ID: m.ID, Name: m.Name, Agent: m.Agent, State: m.State, Task: working[m.Name]})
	}
	return out, nil
}

// Team is the team this conversation's session leads, its runs numbered
// as Subagents numbers them.
func (c *Conversation) Team(ctx context.Context) (Team, error) {
	if err := session.ValidateID(c.target); err != nil {
		return Team{}, err
	}
	t, err := c.r.Team(ctx, c.target)
	if err != nil || len(t.Members) == 0 {
		return t, err
	}
	runs, err := c.Subagents(ctx)
	if err != nil {
		return Team{}, err
	}
	byID := map[string]SubagentRun{}
	for _, run := range runs {
		byID[run.ID] = run
	}
	for i, m := range t.Members {
		if run, ok := byID[m.ID]; ok {
			t.Members[i].Index, t.Members[i].Tokens = run.Index, run.Tokens
		}
	}
	return t, nil
}
