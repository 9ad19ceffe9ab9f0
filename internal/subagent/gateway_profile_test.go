package subagent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

// gatewayJSON decodes a gateway reply.
func gatewayJSON(t *testing.T, res tool.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(resultText(res)), &m); err != nil {
		t.Fatalf("reply is not JSON: %v\n%s", err, resultText(res))
	}
	return m
}

// notification waits for the notification of task id addressed to the
// main agent.
func notification(t *testing.T, h *harness, id string) queue.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for {
		entries, err := h.svc.cfg.Queue.Wait(ctx, "", nil)
		if err != nil {
			t.Fatalf("no notification for task %s: %v", id, err)
		}
		for _, e := range entries {
			if e.TaskID == id {
				return e
			}
		}
	}
}

// TestGatewayTools: the profile's tool names.
func TestGatewayTools(t *testing.T) {
	h := newProfileHarness(t, setup{}, "gateway")
	if d := cmp.Diff([]string{"sessions_spawn", "agents_list"}, names(h.profileTools(h.mainCaller(), "gateway"))); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

// TestGatewaySpawnAccepted: sessions_spawn never blocks — it answers
// {"status": "accepted", "runId", "childSessionKey"} while the child still
// works — and the run is a background task whose end is notified.
func TestGatewaySpawnAccepted(t *testing.T) {
	hs := &holds{}
	h := newProfileHarness(t, setup{
		agents:    map[string]string{"visible": agentFile("visible", "Sees", "", "Look.")},
		script:    profileScript(hs),
		subagents: config.Subagents{AllowAgents: []string{"*"}},
	}, "gateway")
	c := h.mainCaller()
	tools := h.profileTools(c, "gateway")
	for _, tt := range []struct{ agentID, want string }{{"", "general-purpose"}, {"visible", "visible"}} {
		done := make(chan tool.Result, 1)
		go func() {
			res, err := invokeTool(context.Background(), tools, "sessions_spawn", c, "toolu_gw", SessionsSpawnInput{Task: "block:" + tt.want, AgentID: tt.agentID})
			if err != nil {
				res = tool.Errorf("%v", err)
			}
			done <- res
		}()
		var res tool.Result
		select {
		case res = <-done:
		case <-time.After(waitFor):
			hs.get(tt.want).open()
			t.Fatal("sessions_spawn blocked on its child")
		}
		m := gatewayJSON(t, res)
		id, _ := m["runId"].(string)
		want := map[string]any{"status": "accepted", "runId": id, "childSessionKey": "agent:" + tt.want + ":subagent:" + id}
		if d := cmp.Diff(want, m); d != "" || res.IsError || id == "" {
			t.Errorf("agentId %q: reply (-want +got):\n%s", tt.agentID, d)
		}
		info, err := h.mem.GetSession(context.Background(), id)
		if err != nil || info.Key != want["childSessionKey"] || info.ParentID != c.SessionID {
			t.Errorf("child session %+v (%v), want key %s under %s", info, err, want["childSessionKey"], c.SessionID)
		}
		hs.get(tt.want).open()
		if e := notification(t, h, id); !strings.Contains(e.Message.Text(), "<status>completed</status>") {
			t.Errorf("notification: %s", e.Message.Text())
		}
	}
}

// TestGatewaySpawnRefusals: the JSON errors, forbidden for what the spawn
// permission or the depth limit refuses.
func TestGatewaySpawnRefusals(t *testing.T) {
	neg := -1
	tests := []struct {
		name   string
		depth  int
		in     SessionsSpawnInput
		status string
		error  string // the start of the error
	}{
		{name: "no task", in: SessionsSpawnInput{Task: "  "}, status: "error", error: "task is required"},
		{name: "denied agent", in: SessionsSpawnInput{Task: "x", AgentID: "secret"}, status: "forbidden", error: "Permission to use Agent denied"},
		{name: "unknown agent", in: SessionsSpawnInput{Task: "x", AgentID: "nope"}, status: "error", error: `unknown agentId "nope"; allowed: general-purpose`},
		{name: "traversal", in: SessionsSpawnInput{Task: "x", AgentID: "../x"}, status: "error", error: "invalid agentId: "},
		{name: "bad cleanup", in: SessionsSpawnInput{Task: "x", Cleanup: "later"}, status: "error", error: `cleanup must be keep or delete, got "later"`},
		{name: "negative timeout", in: SessionsSpawnInput{Task: "x", RunTimeoutSeconds: &neg}, status: "error", error: "runTimeoutSeconds must be 0 (no limit) or more, got -1"},
		{name: "too deep", depth: 1, in: SessionsSpawnInput{Task: "x"}, status: "forbidden", error: "sessions_spawn is not allowed here: maximum spawn depth exceeded (max=1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newProfileHarness(t, setup{
				agents:    map[string]string{"secret": agentFile("secret", "Secret", "", "Shh.")},
				task:      profileTaskRules(t, [2]string{"secret", "deny"}),
				subagents: config.Subagents{AllowAgents: []string{"*"}},
			}, "gateway")
			c := h.mainCaller()
			c.Depth = tt.depth
			res := mustInvokeTool(t, h.allTools(c, "gateway"), "sessions_spawn", c, tt.in)
			m := gatewayJSON(t, res)
			msg, _ := m["error"].(string)
			if !res.IsError || m["status"] != tt.status || !strings.HasPrefix(msg, tt.error) || len(m) != 2 {
				t.Errorf("reply (error %v) = %v, want status %q and an error starting %q", res.IsError, m, tt.status, tt.error)
			}
			if n := len(h.requestsOf("general-purpose")) + len(h.requestsOf("secret")); n != 0 {
				t.Errorf("a refused spawn called a model %d times", n)
			}
		})
	}
}

// TestGatewayWarnings: an unusable model is ignored with a warning — the
// run uses the default — and so is a thinking level, not applied yet.
func TestGatewayWarnings(t *testing.T) {
	tests := []struct {
		name    string
		in      SessionsSpawnInput
		model   string // the model the child ran on
		warning string
	}{
		{name: "usable model", in: SessionsSpawnInput{Task: "hi", Model: "haiku"}, model: "haiku"},
		{name: "unusable model", in: SessionsSpawnInput{Task: "hi", Model: "nope"}, model: mainModel, warning: `the call's model "nope" cannot be used`},
		{name: "thinking", in: SessionsSpawnInput{Task: "hi", Thinking: "high"}, model: mainModel, warning: `thinking "high" was not applied`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newProfileHarness(t, setup{}, "gateway")
			c := h.mainCaller()
			res := mustInvokeTool(t, h.profileTools(c, "gateway"), "sessions_spawn", c, tt.in)
			m := gatewayJSON(t, res)
			warning, _ := m["warning"].(string)
			if res.IsError || m["status"] != "accepted" || (tt.warning == "") != (warning == "") || !strings.HasPrefix(warning, tt.warning) {
				t.Errorf("reply = %v, want accepted with a warning starting %q", m, tt.warning)
			}
			notification(t, h, m["runId"].(string))
			if got := h.firstRequest("general-purpose").model; got != tt.model {
				t.Errorf("child ran on %s, want %s", got, tt.model)
			}
		})
	}
}

// TestGatewayRunTimeoutAndCleanup: runTimeoutSeconds aborts the run with
// status timeout, and a timed-out session is never archived; cleanup
// "delete" archives the child's session once its end is announced, "keep"
// leaves it.
func TestGatewayRunTimeoutAndCleanup(t *testing.T) {
	one := 1
	tests := []struct {
		name     string
		settings config.Subagents
		in       SessionsSpawnInput
		status   task.Status
		archived bool
	}{
		{name: "keep", in: SessionsSpawnInput{Task: "hi"}, status: task.StatusCompleted},
		{name: "delete", in: SessionsSpawnInput{Task: "hi", Cleanup: "delete"}, status: task.StatusCompleted, archived: true},
		{name: "delete by settings", settings: config.Subagents{Cleanup: "delete"}, in: SessionsSpawnInput{Task: "hi", Cleanup: "delete"}, status: task.StatusCompleted, archived: true},
		{name: "timeout", in: SessionsSpawnInput{Task: "block:never", RunTimeoutSeconds: &one, Cleanup: "delete"}, status: task.StatusTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			hs := &holds{}
			defer hs.get("never").open()
			h := newProfileHarness(t, setup{script: profileScript(hs), subagents: tt.settings}, "gateway")
			c := h.mainCaller()
			m := gatewayJSON(t, mustInvokeTool(t, h.profileTools(c, "gateway"), "sessions_spawn", c, tt.in))
			id, _ := m["runId"].(string)
			notification(t, h, id)
			// Cleanup runs after the end is announced; the group's Wait
			// covers it.
			h.group.Stop(nil)
			h.group.Wait()
			rec, err := h.svc.cfg.Tasks.GetTask(context.Background(), id)
			if err != nil || rec.Status != tt.status {
				t.Fatalf("task status %s (%v), want %s", rec.Status, err, tt.status)
			}
			if tt.status == task.StatusTimeout && !strings.Contains(rec.Error, "runTimeoutSeconds (1s) of sessions_spawn elapsed") {
				t.Errorf("timeout error = %q", rec.Error)
			}
			info, err := h.mem.GetSession(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if archived := strings.Contains(info.TranscriptPath, ".deleted."); archived != tt.archived {
				t.Errorf("transcript %s: archived %v, want %v", info.TranscriptPath, archived, tt.archived)
			}
			if info.Status == session.StatusRunning {
				t.Errorf("child session still running")
			}
		}))
	}
}

// TestSP1AllowAgents: sessions_spawn's agentId names another agent only
// where the requester's allowAgents lets it (S-P1): its definition's list,
// else the settings' subagents.allowAgents; "*" is any; unset, only its own
// agent and general-purpose (what no agentId starts). agents_list shows
// exactly what may be named.
func TestSP1AllowAgents(t *testing.T) {
	agents := map[string]string{
		"visible": agentFile("visible", "Sees", "", "Look."),
		"other":   agentFile("other", "Another agent", "", "Other."),
		"lead":    agentFile("lead", "Leads", "allowAgents: [visible]\n", "Lead."),
		"solo":    agentFile("solo", "Alone", "allowAgents: []\n", "Solo."),
	}
	type want struct {
		agentID string
		ok      bool // accepted; else forbidden
	}
	tests := []struct {
		name      string
		settings  []string
		requester string
		spawns    []want
		listed    []string
		error     string // the forbidden reply's error for the first refused spawn
	}{
		{
			name: "unset: only general-purpose and the requester's own", requester: "main",
			spawns: []want{{"", true}, {"general-purpose", true}, {"visible", false}},
			listed: []string{"general-purpose"},
			error:  `agentId "visible" is not allowed for agent "main" (allowAgents); allowed: general-purpose (agents_list shows them)`,
		},
		{
			name: "settings name one agent", requester: "main", settings: []string{"visible"},
			spawns: []want{{"visible", true}, {"Visible", true}, {"other", false}},
			listed: []string{"general-purpose", "visible"},
			error:  `agentId "other" is not allowed for agent "main" (allowAgents); allowed: general-purpose, visible (agents_list shows them)`,
		},
		{
			name: "settings *: any", requester: "main", settings: []string{"*"},
			spawns: []want{{"visible", true}, {"other", true}, {"lead", true}},
			listed: []string{"general-purpose", "lead", "other", "solo", "visible"},
		},
		{
			name: "the definition's own list replaces the settings'", requester: "lead", settings: []string{"*"},
			spawns: []want{{"visible", true}, {"lead", true}, {"other", false}},
			listed: []string{"general-purpose", "lead", "visible"},
			error:  `agentId "other" is not allowed for agent "lead" (allowAgents); allowed: general-purpose, lead, visible (agents_list shows them)`,
		},
		{
			name: "an empty list in the definition: only its own", requester: "solo", settings: []string{"*"},
			spawns: []want{{"solo", true}, {"", true}, {"visible", false}},
			listed: []string{"general-purpose", "solo"},
			error:  `agentId "visible" is not allowed for agent "solo" (allowAgents); allowed: general-purpose, solo (agents_list shows them)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newProfileHarness(t, setup{agents: agents, subagents: config.Subagents{AllowAgents: tt.settings}}, "gateway")
			c := h.mainCaller()
			c.Agent = tt.requester
			tools := h.profileTools(c, "gateway")
			var ids []string
			for _, a := range gatewayJSON(t, mustInvokeTool(t, tools, "agents_list", c, AgentsListInput{}))["agents"].([]any) {
				ids = append(ids, a.(map[string]any)["id"].(string))
			}
			if d := cmp.Diff(tt.listed, ids); d != "" {
				t.Errorf("agents_list (-want +got):\n%s", d)
			}
			desc := tools[0].Info().Description
			for _, name := range []string{"visible", "other"} {
				if listed := strings.Contains(desc, "- "+name+":"); listed != slices.Contains(tt.listed, name) {
					t.Errorf("sessions_spawn's description lists %s: %v, want %v:\n%s", name, listed, !listed, desc)
				}
			}
			refused := false
			for _, w := range tt.spawns {
				m := gatewayJSON(t, mustInvokeTool(t, tools, "sessions_spawn", c, SessionsSpawnInput{Task: "hi", AgentID: w.agentID}))
				if w.ok {
					key, _ := m["childSessionKey"].(string)
					target := strings.ToLower(w.agentID)
					if target == "" {
						target = "general-purpose"
					}
					if m["status"] != "accepted" || !strings.HasPrefix(key, "agent:"+target+":subagent:") {
						t.Errorf("agentId %q: reply %v, want accepted as %s", w.agentID, m, target)
					}
					continue
				}
				if m["status"] != "forbidden" {
					t.Errorf("agentId %q: reply %v, want forbidden", w.agentID, m)
				}
				if !refused && m["error"] != tt.error {
					t.Errorf("agentId %q: error\n%v\nwant\n%s", w.agentID, m["error"], tt.error)
				}
				refused = true
				if n := len(h.requestsOf(w.agentID)); n != 0 {
					t.Errorf("the refused agent %q called its model %d times", w.agentID, n)
				}
			}
		})
	}
}
