package cadre_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// The team view every front end shows: the roster with each teammate's
// state and the task it works on, and the shared task list.
func TestConversationTeam(t *testing.T) {
	f := newFixture(t)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			return llm.Reply(llm.Text("alice is done for now")), nil
		}
		switch {
		case len(req.Messages) == 1:
			return llm.Reply(
				llm.ToolUse("toolu_mate", "Agent", json.RawMessage(`{"description":"help","prompt":"team work","name":"alice"}`)),
				llm.ToolUse("toolu_make", "TaskCreate", json.RawMessage(`{"subject":"write the docs","description":"all of them"}`)),
			), nil
		case sent(req, "toolu_make") && !sent(req, "toolu_give"):
			return llm.Reply(llm.ToolUse("toolu_give", "TaskUpdate", json.RawMessage(`{"taskId":"1","owner":"alice","status":"in_progress"}`))), nil
		}
		return llm.Reply(llm.Text("ok")), nil
	}
	if err := os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(`{"subagents": {"teams": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})

	empty, err := cv.c.Team(t.Context())
	if err != nil || empty.Name != "" || len(empty.Members) != 0 || len(empty.Tasks) != 0 {
		t.Fatalf("a session that leads no team: %+v, %v", empty, err)
	}
	cv.send("work as a team")
	cv.waitResults(1)
	cv.waitEvent(cadre.EventSystem, cadre.SubtypeTaskNotification) // alice is idle

	tm, err := cv.c.Team(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if tm.Name != "default" || len(tm.Members) != 1 || len(tm.Tasks) != 1 {
		t.Fatalf("team = %+v", tm)
	}
	m := tm.Members[0]
	if m.Name != "alice" || m.Agent != "general-purpose" || m.State != "idle" || m.Task != "write the docs" || m.Index != 1 || m.ID == "" {
		t.Errorf("alice = %+v; want idle, on \"write the docs\", run #1", m)
	}
	if got := tm.Tasks[0]; got.Owner != "alice" || got.Status != "in_progress" {
		t.Errorf("task = %+v", got)
	}
	byRuntime, err := rt.Team(t.Context(), cv.c.SessionID())
	if err != nil || len(byRuntime.Members) != 1 || byRuntime.Members[0].State != "idle" {
		t.Errorf("Runtime.Team = %+v, %v", byRuntime, err)
	}
}

// sent reports whether the request's history holds the result of call id.
func sent(req *llm.Request, id string) bool {
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && b.ToolUseID == id {
				return true
			}
		}
	}
	return false
}
