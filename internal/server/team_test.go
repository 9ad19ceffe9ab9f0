package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// hostileSubject is a task subject a model wrote to attack the web view;
// the API hands it on as the text it is.
const hostileSubject = `<img src=x onerror="window.__pwned=1"> the printer`

// aTeam is a lead that plans three tasks (#3 blocked by #1) and adds two
// teammates: alice claims #1 and then works on, never answering; bob
// claims #2 and goes idle.
func aTeam(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	msgs, _ := req.JSON()["messages"].([]any)
	step := func(calls ...testkit.ToolCall) testkit.Reply { return testkit.Reply{ToolCalls: calls} }
	update := func(id string, kv ...any) testkit.ToolCall {
		in := map[string]any{"taskId": id}
		for i := 0; i+1 < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return testkit.ToolCall{Name: "TaskUpdate", Input: in}
	}
	switch {
	case strings.Contains(body, `You are \"alice\", a teammate`):
		if len(msgs) == 1 {
			return step(update("1", "status", "in_progress"))
		}
		return testkit.Reply{Stall: testkit.StallNoResponse}
	case strings.Contains(body, `You are \"bob\", a teammate`):
		if len(msgs) == 1 {
			return step(update("2", "status", "in_progress"))
		}
		return testkit.Reply{Text: "BOB-IDLE"}
	case strings.Contains(body, "SLOW-CHILD"):
		return testkit.Reply{Text: "TEST-HARNESS-ERROR: a child that is no teammate"}
	}
	create := func(subject string) testkit.ToolCall {
		return testkit.ToolCall{Name: "TaskCreate", Input: map[string]any{"subject": subject, "description": "do " + subject}}
	}
	mate := func(name string) testkit.ToolCall {
		return testkit.ToolCall{Name: "Agent", Input: map[string]any{"description": name + " joins", "prompt": "Take a task.", "subagent_type": "slow", "name": name}}
	}
	switch len(msgs) {
	case 1:
		return step(create("write the parser"), create(hostileSubject), create("integrate both"))
	case 3:
		return step(update("3", "addBlockedBy", []any{"1"}))
	case 5:
		return step(mate("alice"), mate("bob"))
	}
	return testkit.Reply{Text: "LEAD-ACK"}
}

// GET /api/sessions/{id}/team is the runtime's Team in the API's shape:
// the roster in join order with each teammate's state and task, the task
// list in creation order with owners, what each waits on and blocks; a
// session leading no team has empty lists; a bad id is 400.
func TestTeamEndpoint(t *testing.T) {
	f := newFixtureWith(t, aTeam, Config{}, `{"subagents": {"teams": true}}`)
	r := f.start(map[string]any{"prompt": "build it with a team"})
	s := f.stream(r.ID, nil)
	claimed, bobIdle := map[string]bool{}, false
	s.until(t, "both claims and bob's idle notice", func(e sse) bool {
		if sc, _ := e.data["status_change"].(map[string]any); e.data["subtype"] == "team_task_changed" && sc["to"] == "in_progress" {
			claimed[e.data["by"].(string)] = true
		}
		if e.name == "system" && e.data["subtype"] == "task_notification" && strings.Contains(e.raw, "BOB-IDLE") {
			bobIdle = true
		}
		return claimed["alice"] && claimed["bob"] && bobIdle
	})

	// The wire shape, field by field.
	var raw map[string]json.RawMessage
	if st := f.do("GET", "/api/sessions/"+r.ID+"/team", nil, &raw); st != http.StatusOK {
		t.Fatalf("team: %d %s", st, raw)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"live", "members", "name", "session_id", "tasks"}; !slices.Equal(keys, want) {
		t.Errorf("team's fields %v, want %v", keys, want)
	}
	var team struct {
		SessionID string `json:"session_id"`
		Name      string
		Live      bool `json:"live"`
		Members   []map[string]any
		Tasks     []map[string]any
	}
	f.do("GET", "/api/sessions/"+r.ID+"/team", nil, &team)
	if team.SessionID != r.ID || !team.Live || team.Name != "default" {
		t.Errorf("team of %s: session %q, name %q, live %v", r.ID, team.SessionID, team.Name, team.Live)
	}
	if len(team.Members) != 2 {
		t.Fatalf("members %v, want alice and bob", team.Members)
	}
	// Both join in one turn, in either order, and their runs start in
	// either order too: found by name, each with its run's own #N.
	byName := map[string]map[string]any{}
	for _, m := range team.Members {
		byName[fmt.Sprint(m["name"])] = m
	}
	var subs []subagentJSON
	f.do("GET", "/api/runs/"+r.ID+"/subagents", nil, &subs)
	index := map[string]float64{}
	for _, sa := range subs {
		index[sa.ID] = float64(sa.Index)
	}
	for _, m := range team.Members {
		if id, _ := m["id"].(string); m["index"] != index[id] || index[id] < 1 {
			t.Errorf("member %v: index %v, want its run's #N in /subagents, %v", m["name"], m["index"], index[id])
		}
	}
	for _, want := range []map[string]any{
		{"name": "alice", "agent": "slow", "state": "working", "task": "write the parser"},
		{"name": "bob", "agent": "slow", "state": "idle", "task": hostileSubject},
	} {
		m := byName[want["name"].(string)]
		for k, v := range want {
			if m[k] != v {
				t.Errorf("member %s: %s = %v, want %v (%v)", want["name"], k, m[k], v, m)
			}
		}
		if id, _ := m["id"].(string); id == "" {
			t.Errorf("member %s has no id: %v", want["name"], m)
		}
		if _, ok := m["tokens"].(float64); !ok {
			t.Errorf("member %s has no tokens: %v", want["name"], m)
		}
	}
	if len(team.Tasks) != 3 {
		t.Fatalf("tasks %v, want three", team.Tasks)
	}
	type row struct{ ID, Subject, Status, Owner, Blocks, BlockedBy, Waiting string }
	list := func(v any) string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return strings.Join(out, ",")
	}
	for i, want := range []row{
		{"1", "write the parser", "in_progress", "alice", "3", "", ""},
		{"2", hostileSubject, "in_progress", "bob", "", "", ""},
		{"3", "integrate both", "pending", "", "", "1", "1"},
	} {
		tk := team.Tasks[i]
		owner, _ := tk["owner"].(string)
		got := row{tk["id"].(string), tk["subject"].(string), tk["status"].(string), owner, list(tk["blocks"]), list(tk["blocked_by"]), list(tk["waiting"])}
		if got != want {
			t.Errorf("task %d: %+v, want %+v", i+1, got, want)
		}
		if tk["description"] != "do "+want.Subject {
			t.Errorf("task %d's description %v", i+1, tk["description"])
		}
	}

	// A session that leads no team: empty lists, not null.
	other := f.start(map[string]any{"prompt": "alone"})
	var empty map[string]any
	if st := f.do("GET", "/api/sessions/"+other.ID+"/team", nil, &empty); st != http.StatusOK {
		t.Fatalf("team of a session without one: %d %v", st, empty)
	}
	if m, ok := empty["members"].([]any); !ok || len(m) != 0 {
		t.Errorf("members of a session without a team: %v", empty["members"])
	}
	if ts, ok := empty["tasks"].([]any); !ok || len(ts) != 0 {
		t.Errorf("tasks of a session without a team: %v", empty["tasks"])
	}
	if empty["name"] != "" {
		t.Errorf("the name of a team that is not: %v", empty["name"])
	}
	var e errorBody
	if st := f.do("GET", "/api/sessions/bad..id/team", nil, &e); st != http.StatusBadRequest || !strings.Contains(e.Error, "invalid id") {
		t.Errorf("a bad id: %d %q", st, e.Error)
	}
}
