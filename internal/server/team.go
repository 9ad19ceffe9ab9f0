package server

import (
	"net/http"

	"github.com/cadre-dev/cadre"
)

// teamJSON is GET /api/sessions/{id}/team: the team a main session leads,
// as the web view's board draws it — the roster in join order and the
// shared task list in creation order (the page groups it by status). A
// session that leads no team has both lists empty.
type teamJSON struct {
	SessionID string `json:"session_id"`
	// Name is the team's name (the lead's team_name, else "default");
	// "" when the session leads no team.
	Name string `json:"name"`
	// Live: a run of this server holds the session, so the roster's
	// states are its runs' as they are now.
	Live    bool             `json:"live"`
	Members []teammateJSON   `json:"members"`
	Tasks   []cadre.TeamTask `json:"tasks"`
}

// teammateJSON is one teammate of the roster.
type teammateJSON struct {
	// Index is its run's #N in the run's agents tree; 0 when no run of
	// this server holds the session.
	Index int    `json:"index,omitempty"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	Agent string `json:"agent"`
	// State is working, idle or ended.
	State string `json:"state"`
	// Task is the subject of the task it owns in progress, if any.
	Task   string `json:"task,omitempty"`
	Tokens int64  `json:"tokens"`
}

// getTeam is GET /api/sessions/{id}/team: the runtime's Team, of the live
// run holding the session when this server has one (its roster as it is
// now), else of the store.
func (s *Server) getTeam(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	rn := s.runOf(id)
	live := rn != nil && !rn.done()
	var team cadre.Team
	if live {
		team, err = rn.conv.Team(r.Context())
	} else {
		team, err = s.rt.Team(r.Context(), id)
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, teamOf(id, live, team))
}

func teamOf(id string, live bool, t cadre.Team) teamJSON {
	out := teamJSON{SessionID: id, Name: t.Name, Live: live, Members: make([]teammateJSON, 0, len(t.Members)), Tasks: make([]cadre.TeamTask, 0, len(t.Tasks))}
	for _, m := range t.Members {
		out.Members = append(out.Members, teammateJSON{
			Index: m.Index, ID: m.ID, Name: m.Name, Agent: m.Agent, State: m.State, Task: m.Task, Tokens: m.Tokens,
		})
	}
	for _, tk := range t.Tasks {
		// Lists are [] on the wire, never null: the page reads .length.
		tk.Blocks, tk.BlockedBy, tk.Waiting = nonNil(tk.Blocks), nonNil(tk.BlockedBy), nonNil(tk.Waiting)
		out.Tasks = append(out.Tasks, tk)
	}
	return out
}
