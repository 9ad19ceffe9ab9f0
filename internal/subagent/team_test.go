package subagent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// teamHarness is a harness with teams on.
func teamHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, setup{})
	h.svc.cfg.Teams = true
	return h
}

// toolOf is the caller's tool of that name.
func (h *harness) toolOf(c Caller, name string) tool.Tool {
	h.t.Helper()
	for _, tl := range h.svc.Tools(c) {
		if tl.Info().Name == name {
			return tl
		}
	}
	h.t.Fatalf("%s has no %s tool among %v", c.Agent, name, names(h.svc.Tools(c)))
	return nil
}

func (h *harness) teamUse(c Caller, name string, in any) tool.Result {
	h.t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		h.t.Fatal(err)
	}
	res, err := h.toolOf(c, name).Call(context.Background(), tool.Env{Cwd: c.Cwd, SessionID: c.SessionID, ToolUseID: "toolu_" + name}, raw)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// addTeammate adds a teammate to c's team and waits until it is idle.
func (h *harness) addTeammate(c Caller, name string) string {
	h.t.Helper()
	res := h.teamUse(c, "Agent", map[string]any{"description": "join", "prompt": "work", "name": name})
	id, _ := res.Meta.(map[string]any)["teammate_id"].(string)
	if res.IsError || id == "" {
		h.t.Fatalf("adding %s: %s", name, resultText(res))
	}
	if _, err := h.svc.desk.AwaitRecord(context.Background(), id, waitFor); err != nil {
		h.t.Fatal(err)
	}
	// The record ends before the run leaves the running table (its
	// notice is sent in between), and ListAgents says "running" until it
	// has: wait for that too.
	h.awaitDone(id)
	return id
}

// A team's names are its own: a teammate cannot reach another session's
// teammate by name or id, nor can the other session's lead.
func TestTeamNamesResolveWithinTheTeam(t *testing.T) {
	h := teamHarness(t)
	lead1 := h.mainCaller()
	lead2 := h.mainCaller()
	lead2.RootSessionID, lead2.SessionID, lead2.AgentID = "main-session-2", "main-session-2", "main-session-2"
	if err := h.mem.CreateSession(context.Background(), session.Info{ID: lead2.RootSessionID, Agent: "main", Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	h.addTeammate(lead1, "alice")
	bob := h.addTeammate(lead2, "bob")
	alice := lead1
	alice.Depth, alice.Agent, alice.Teammate, alice.AgentID = 1, "general-purpose", "alice", "alice-id"

	for _, to := range []string{"bob", bob} {
		res := h.teamUse(alice, "SendMessage", map[string]any{"to": to, "message": "hi", "summary": "hello"})
		if !res.IsError || !strings.Contains(resultText(res), "has no teammate") {
			t.Errorf("alice to %s: %s", to, resultText(res))
		}
	}
	res := h.teamUse(lead1, "SendMessage", map[string]any{"to": bob, "message": "hi", "summary": "hello"})
	if !res.IsError || !strings.Contains(resultText(res), "another session") {
		t.Errorf("lead 1 to bob's id: %s", resultText(res))
	}
	// Session 2's roster does not show alice, nor session 1's bob.
	if txt := resultText(h.teamUse(lead2, "ListAgents", map[string]any{})); strings.Contains(txt, "alice") || !strings.Contains(txt, "- bob (general-purpose): idle") {
		t.Errorf("lead 2's roster:\n%s", txt)
	}
}

// The lead hears of a task's completion once, however often it is
// completed, and not of its own completions.
func TestTeamCompletionNoticedOnce(t *testing.T) {
	h := teamHarness(t)
	lead := h.mainCaller()
	lead.AgentID = "lead-target"
	h.addTeammate(lead, "alice")
	alice := lead
	alice.Depth, alice.Agent, alice.Teammate, alice.AgentID = 1, "general-purpose", "alice", "alice-id"
	h.svc.cfg.Queue.Take(lead.AgentID) // the idle notice

	h.teamUse(lead, "TaskCreate", map[string]any{"subject": "one", "description": "d"})
	h.teamUse(lead, "TaskCreate", map[string]any{"subject": "two", "description": "d"})
	for _, step := range []struct {
		who    Caller
		id, to string
	}{{alice, "1", "in_progress"}, {alice, "1", "completed"}, {alice, "1", "in_progress"}, {alice, "1", "completed"}, {lead, "2", "completed"}} {
		if res := h.teamUse(step.who, "TaskUpdate", map[string]any{"taskId": step.id, "status": step.to}); res.IsError || !strings.Contains(resultText(res), "status") {
			t.Fatalf("#%s to %s: %s", step.id, step.to, resultText(res))
		}
	}
	var got []string
	for _, e := range h.svc.cfg.Queue.Take(lead.AgentID) {
		got = append(got, e.Message.Text())
	}
	if len(got) != 1 || !strings.Contains(got[0], `Teammate "alice" completed task #1: one`) {
		t.Errorf("the lead's notices: %q, want one for #1", got)
	}
	l, err := h.svc.cfg.TaskLists.GetList(context.Background(), lead.RootSessionID)
	if err != nil {
		t.Fatal(err)
	}
	if it, _ := l.Item("1"); it.Status != tasklist.Completed || it.Owner != "alice" {
		t.Errorf("#1: %+v", it)
	}
}

// A teammate's tools: its definition's, the team's, never a spawn tool;
// names taken on the team are refused.
func TestTeammateToolsAndNames(t *testing.T) {
	h := teamHarness(t)
	lead := h.mainCaller()
	alice := lead
	alice.Depth, alice.Agent, alice.Teammate, alice.Leaf = 1, "general-purpose", "alice", true
	got := strings.Join(names(h.svc.Tools(alice)), " ")
	if got != "SendMessage TaskCreate TaskGet TaskList TaskUpdate ListAgents" {
		t.Errorf("a teammate's team tools: %s", got)
	}
	h.addTeammate(lead, "alice")
	for _, tc := range []struct{ name, want string }{
		{"alice", "already has a teammate named"},
		{"main", "is the lead's"},
	} {
		res := h.teamUse(lead, "Agent", map[string]any{"description": "join", "prompt": "work", "name": tc.name})
		if !res.IsError || !strings.Contains(resultText(res), tc.want) {
			t.Errorf("adding %s: %s", tc.name, resultText(res))
		}
	}
	res := h.teamUse(lead, "Agent", map[string]any{"description": "join", "prompt": "work", "name": "bob", "team_name": "other"})
	if !res.IsError || !strings.Contains(resultText(res), "a session has one team") {
		t.Errorf("a second team: %s", resultText(res))
	}
}

// A teammate woken by a front end's message (Service.SendMessage, the
// TUI's and the SDK's) keeps the team's tools.
func TestTeammateWokenFromOutsideStaysOnTheTeam(t *testing.T) {
	var mu sync.Mutex
	var woken []string
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages) > 1 {
			var tools []string
			for _, tl := range req.Tools {
				tools = append(tools, tl.Name)
			}
			mu.Lock()
			woken = tools
			mu.Unlock()
		}
		return reply("done"), nil
	}})
	h.svc.cfg.Teams = true
	lead := h.mainCaller()
	id := h.addTeammate(lead, "alice")
	if _, err := h.svc.SendMessage(context.Background(), lead, "alice", "one more thing"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.desk.AwaitRecord(context.Background(), id, waitFor); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(woken, "TaskUpdate") || !slices.Contains(woken, "ListAgents") {
		t.Errorf("the woken teammate's tools %v lack the team's", woken)
	}
}
