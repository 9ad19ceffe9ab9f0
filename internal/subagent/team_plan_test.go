package subagent

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/llm"
)

// A teammate added with mode "plan" changes nothing until the lead
// approves its plan: its edits are refused in plan mode; another
// teammate's "approval" and a stale one are refused; a rejection keeps it
// in plan mode; the lead's approval lifts it, for the next call on.
func TestTeammatePlanApproval(t *testing.T) {
	var mu sync.Mutex
	var results []string // what alice's edits returned, in order
	h := newHarness(t, setup{mode: permission.ModeAcceptEdits, script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if !strings.Contains(req.Messages[0].Text(), `"alice"`) {
			return reply("bob here"), nil
		}
		last := req.Messages[len(req.Messages)-1]
		for _, b := range last.Content {
			if b.Type == llm.BlockToolResult && strings.HasPrefix(b.ToolUseID, "edit") {
				mu.Lock()
				results = append(results, b.ResultText())
				mu.Unlock()
				if strings.HasPrefix(b.ToolUseID, "edit-first") {
					return replyBlocks(use("plan-1", "ExitPlanMode", map[string]any{"plan": "1. change main.go"})), nil
				}
				return reply("done"), nil
			}
			if b.Type == llm.BlockToolResult {
				return reply("waiting for the lead"), nil
			}
		}
		switch text := last.Text(); {
		case strings.Contains(text, "did not approve"):
			return replyBlocks(use("plan-2", "ExitPlanMode", map[string]any{"plan": "1. change main.go\n2. test it"})), nil
		case strings.Contains(text, "approved your plan"):
			return replyBlocks(use("edit-after", "Edit", map[string]any{"file_path": "main.go"})), nil
		}
		return replyBlocks(use("edit-first", "Edit", map[string]any{"file_path": "main.go"})), nil
	}})
	h.svc.cfg.Teams = true
	lead := h.mainCaller()
	lead.AgentID = "lead-target"

	res := h.teamUse(lead, "Agent", map[string]any{"description": "plan", "prompt": "fix main.go", "name": "alice", "mode": "plan"})
	alice, _ := res.Meta.(map[string]any)["teammate_id"].(string)
	if res.IsError || alice == "" {
		t.Fatalf("adding alice: %s", resultText(res))
	}
	h.addTeammate(lead, "bob")
	idle := func() {
		t.Helper()
		if _, err := h.svc.desk.AwaitRecord(context.Background(), alice, waitFor); err != nil {
			t.Fatal(err)
		}
	}
	idle()
	request := func() string {
		t.Helper()
		for _, e := range h.svc.cfg.Queue.Take(lead.AgentID) {
			if m := regexp.MustCompile(`request_id="(plan-[^"]+)"`).FindStringSubmatch(e.Message.Text()); m != nil {
				return m[1]
			}
		}
		t.Fatal("the lead got no plan_approval_request")
		return ""
	}
	first := request()
	answer := func(from any, id string, approve bool) string {
		t.Helper()
		msg, _ := json.Marshal(map[string]any{"type": "plan_approval_response", "request_id": id, "approve": approve, "feedback": "add a test"})
		c := from.(Caller)
		return resultText(h.teamUse(c, "SendMessage", map[string]any{"to": "alice", "message": string(msg), "summary": "your plan"}))
	}
	bob := lead
	bob.Depth, bob.Agent, bob.Teammate, bob.AgentID = 1, "general-purpose", "bob", "bob-id"
	if got := answer(bob, first, true); !strings.Contains(got, "only the lead") {
		t.Errorf("bob approving alice's plan: %s", got)
	}
	if got := answer(lead, "plan-nonsense", true); !strings.Contains(got, "is not teammate \"alice\"'s plan") {
		t.Errorf("a wrong request id: %s", got)
	}
	if got := answer(lead, first, false); !strings.Contains(got, "woke it") {
		t.Fatalf("the lead's rejection: %s", got)
	}
	idle()
	second := request()
	if got := answer(lead, first, true); !strings.Contains(got, "has no plan waiting") && !strings.Contains(got, "is not teammate") {
		t.Errorf("approving the answered request: %s", got)
	}
	if got := answer(lead, second, true); !strings.Contains(got, "woke it") {
		t.Fatalf("the lead's approval: %s", got)
	}
	idle()

	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(strings.ToLower(results[0]), "plan mode") || results[1] != "Edit ran on main.go" {
		t.Errorf("alice's edits returned %q; want refused in plan mode, then run", results)
	}
}

// A team outlives the process that led it: a service started after it
// (sharing the store) knows the roster, keeps the names taken, wakes a
// teammate as a teammate, and keeps a plan-mode teammate in plan mode.
func TestTeamRosterOutlivesTheProcess(t *testing.T) {
	var mu sync.Mutex
	var woken []string // the tools of alice's request after the restart
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "after the restart") {
			mu.Lock()
			for _, tl := range req.Tools {
				woken = append(woken, tl.Name)
			}
			mu.Unlock()
		}
		return reply("done"), nil
	}})
	h.svc.cfg.Teams = true
	lead := h.mainCaller()
	res := h.teamUse(lead, "Agent", map[string]any{"description": "plan", "prompt": "plan it", "name": "alice", "mode": "plan", "team_name": "red"})
	alice, _ := res.Meta.(map[string]any)["teammate_id"].(string)
	if res.IsError || alice == "" {
		t.Fatalf("adding alice: %s", resultText(res))
	}
	if _, err := h.svc.desk.AwaitRecord(context.Background(), alice, waitFor); err != nil {
		t.Fatal(err)
	}
	h.addTeammate(lead, "bob")

	// The next process: a new service over the same stores.
	cfg := h.svc.cfg
	cfg.Queue, cfg.Owner = nil, "process-b"
	next, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = next
	name, members, ok := next.Roster(context.Background(), lead.RootSessionID)
	if !ok || name != "red" || len(members) != 2 || members[0].Name != "alice" || members[0].ID != alice || members[0].State != "idle" || members[1].Name != "bob" {
		t.Fatalf("the roster after the restart: %q %+v %v", name, members, ok)
	}
	if txt := resultText(h.teamUse(lead, "ListAgents", map[string]any{})); !strings.Contains(txt, `Team "red"`) || !strings.Contains(txt, "- alice (general-purpose): idle") || !strings.Contains(txt, "- bob") {
		t.Errorf("ListAgents after the restart:\n%s", txt)
	}
	if res := h.teamUse(lead, "Agent", map[string]any{"description": "again", "prompt": "p", "name": "alice"}); !res.IsError || !strings.Contains(resultText(res), "already has a teammate named") {
		t.Errorf("taking alice's name again: %s", resultText(res))
	}
	if got := resultText(h.teamUse(lead, "SendMessage", map[string]any{"to": "alice", "message": "after the restart: go on", "summary": "go on"})); !strings.Contains(got, "woke it") {
		t.Fatalf("waking alice: %s", got)
	}
	if _, err := next.desk.AwaitRecord(context.Background(), alice, waitFor); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"TaskUpdate", "ListAgents", "ExitPlanMode"} {
		if !slices.Contains(woken, want) {
			t.Errorf("alice woken after the restart has tools %v: no %s", woken, want)
		}
	}
}
