package subagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// routingAgents are one of each kind of agent routing treats differently.
func routingAgents() map[string]string {
	return map[string]string{
		"explorer": agentFile("explorer", "Explores the code base", "tools: Read, Grep, Glob\n", "Explore."),
		"stealth":  agentFile("stealth", "Works unseen", "hidden: true\n", "Hide."),
		"secret":   agentFile("secret", "Must not be spawned", "", "Secret."),
		"boss":     agentFile("boss", "A primary agent", "mode: primary\n", "Boss."),
		"remote":   agentFile("remote", "Runs elsewhere", "isolation: remote\n", "Says it is remote but names no url."),
	}
}

func TestRouting(t *testing.T) {
	task := permission.TaskRules{{Pattern: "secret", Action: permission.ActionDeny}}
	tests := []struct {
		name    string
		deny    []string
		task    permission.TaskRules
		typ     string
		want    []string // fragments of the error; nil means the spawn succeeds
		notWant []string
	}{
		{name: "no type is general-purpose", typ: ""},
		{name: "a named agent", typ: "explorer"},
		{name: "names ignore case", typ: "Explorer"},
		{name: "a hidden agent is callable", typ: "stealth"},
		{
			name: "unknown type lists the available names", typ: "nope", task: task,
			want:    []string{`unknown subagent_type "nope"; available agents: `, "explorer", "general-purpose"},
			notWant: []string{"secret", "boss", "remote"},
		},
		{
			name: "a primary agent is refused", typ: "boss",
			want: []string{`agent "boss" is a primary agent, not a subagent`, "available agents: ", "explorer"},
		},
		{
			name: "isolation: remote without a url is refused", typ: "remote",
			want: []string{`agent "remote" has isolation: remote but no url`},
		},
		{name: "traversal with ..", typ: "../explorer", want: []string{"invalid subagent_type", "path traversal"}},
		{name: "traversal with /", typ: "a/b", want: []string{"invalid subagent_type", "path traversal"}},
		{name: "traversal with a backslash", typ: `a\b`, want: []string{"invalid subagent_type", "path traversal"}},
		{name: "a bad character", typ: "exp.lorer", want: []string{"invalid subagent_type", "bad character"}},
		{
			name: "denied by permissions.task, with the rule named", typ: "secret", task: task,
			want: []string{`Permission to use Agent denied (permissions.task "secret": "deny")`, "may not be spawned", "do not retry"},
		},
		{
			name: "denied by an Agent(name) deny rule, with the rule named", typ: "secret", deny: []string{"Agent(secret)"},
			want: []string{`Permission to use Agent denied by rule "Agent(secret)" (permissions.deny)`},
		},
		{
			name: "a later allow overrides a wildcard deny", typ: "explorer",
			task: permission.TaskRules{{Pattern: "*", Action: permission.ActionDeny}, {Pattern: "explorer", Action: permission.ActionAllow}},
		},
		{
			name: "an ask with nobody to answer is refused", typ: "explorer",
			task: permission.TaskRules{{Pattern: "expl*", Action: permission.ActionAsk}},
			want: []string{"requires approval", `"expl*": "ask"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{agents: routingAgents(), deny: tt.deny, task: tt.task})
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "route", Prompt: "go", SubagentType: tt.typ})
			text := resultText(res)
			if tt.want == nil {
				if res.IsError {
					t.Fatalf("spawn of %q failed: %s", tt.typ, text)
				}
				want := strings.ToLower(tt.typ)
				if want == "" {
					want = "general-purpose"
				}
				if n := len(h.requestsOf(want)); n != 1 {
					t.Errorf("agent %q called its model %d times, want 1", want, n)
				}
				return
			}
			if !res.IsError {
				t.Fatalf("spawn of %q succeeded, want an error; result:\n%s", tt.typ, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("error lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("error mentions %q:\n%s", w, text)
				}
			}
			h.mu.Lock()
			n := len(h.requests)
			h.mu.Unlock()
			if n != 0 {
				t.Errorf("a refused spawn ran a model %d times", n)
			}
			if list, _ := h.mem.ListSessions(context.Background(), session.Filter{}); len(list) != 1 {
				t.Errorf("a refused spawn left %d sessions, want only the main one", len(list))
			}
		})
	}
}

// TestSpawnToolRemoved checks S-P1: task rules whose last rule is "*":
// "deny", or a bare Agent deny, leave no spawn tool, and no context block.
func TestSpawnToolRemoved(t *testing.T) {
	tests := []struct {
		name string
		task permission.TaskRules
		deny []string
		want int
	}{
		{name: "* deny last", task: permission.TaskRules{{Pattern: "explorer", Action: permission.ActionAllow}, {Pattern: "*", Action: permission.ActionDeny}}},
		{name: "bare Agent deny", deny: []string{"Agent"}},
		{name: "bare Task deny", deny: []string{"Task"}},
		{name: "* deny then an allow keeps the tool", task: permission.TaskRules{{Pattern: "*", Action: permission.ActionDeny}, {Pattern: "explorer", Action: permission.ActionAllow}}, want: 1},
		{name: "a deny for one agent keeps the tool", task: permission.TaskRules{{Pattern: "explorer", Action: permission.ActionDeny}}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{agents: routingAgents(), task: tt.task, deny: tt.deny})
			c := h.mainCaller()
			if got := spawnTools(h.svc.Tools(c)); got != tt.want {
				t.Errorf("main agent has %d spawn tools, want %d", got, tt.want)
			}
			if got := h.svc.SystemContext(t.Context(), c); (got != "") != (tt.want > 0) {
				t.Errorf("SystemContext = %q with %d spawn tools", got, tt.want)
			}
		})
	}
}

// TestCallerTaskRules: a child's own permission.task rules decide what it
// may spawn, after the settings' rules.
func TestCallerTaskRules(t *testing.T) {
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxSpawnDepth: 2},
		agents: map[string]string{
			"lead":   agentFile("lead", "Delegates", "permission:\n  task:\n    worker: deny\n", "Lead."),
			"worker": agentFile("worker", "Works", "", "Work."),
		},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			if req.Agent == "lead" && turn(req) == 0 {
				return replyBlocks(use("toolu_gc", "Agent", AgentInput{Description: "work", Prompt: "do it", SubagentType: "worker"})), nil
			}
			if req.Agent == "lead" {
				return reply("lead saw: " + lastToolResult(req)), nil
			}
			return reply("done"), nil
		},
	})
	res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "lead", Prompt: "lead it", SubagentType: "lead"})
	text := resultText(res)
	if !strings.Contains(text, `Permission to use Agent denied (the calling agent's permission.task "worker": "deny")`) {
		t.Errorf("lead's spawn of worker was not refused by its own rule:\n%s", text)
	}
	if n := len(h.requestsOf("worker")); n != 0 {
		t.Errorf("worker ran %d model calls, want none", n)
	}
	var agentDesc string
	for _, s := range h.firstRequest("lead").req.Tools {
		if s.Name == "Agent" {
			agentDesc = s.Description
		}
	}
	if agentDesc == "" {
		t.Fatal("lead has no Agent tool")
	}
	if strings.Contains(agentDesc, "- worker:") || !strings.Contains(agentDesc, "- lead:") {
		t.Errorf("lead's Agent description should list lead but not worker:\n%s", agentDesc)
	}
}

// TestSpawnDepthEnforcedAtSpawn: a spawn tool built for a caller that is
// already at the depth limit is refused when called (S-C1).
func TestSpawnDepthEnforcedAtSpawn(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	c.Depth, c.Agent = 1, "general-purpose"
	_, err := h.svc.Spawn(context.Background(), c, SpawnRequest{ToolUseID: "toolu_1", Prompt: "go"})
	if err == nil || !strings.Contains(err.Error(), "maximum spawn depth exceeded (max=1): general-purpose cannot spawn agents") {
		t.Errorf("spawn from a leaf: err = %v", err)
	}
}

// TestAgentInputRefusals: bad input and the parts of S-A1 not built yet
// are refused clearly, not ignored.
func TestAgentInputRefusals(t *testing.T) {
	tests := []struct {
		name string
		in   AgentInput
		want string
	}{
		{"empty prompt", AgentInput{Description: "x", Prompt: "  "}, "prompt is empty"},
		{"worktree", AgentInput{Description: "x", Prompt: "p", Isolation: "worktree"}, `needs a git repository`},
		{"worktree and cwd", AgentInput{Description: "x", Prompt: "p", Isolation: "worktree", Cwd: "/tmp"}, "cannot be combined"},
		{"remote without a url", AgentInput{Description: "x", Prompt: "p", Isolation: "remote"}, `isolation "remote" needs an agent whose definition names a url, and "general-purpose" has none; remote agents: none`},
		{"remote and cwd", AgentInput{Description: "x", Prompt: "p", Isolation: "remote", Cwd: "/tmp"}, `cwd and isolation: "remote" cannot be combined`},
		{"unknown isolation", AgentInput{Description: "x", Prompt: "p", Isolation: "jail"}, `unknown isolation "jail"`},
		{"cwd not a directory", AgentInput{Description: "x", Prompt: "p", Cwd: "missing"}, `cwd "missing" is not a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			res := h.mustCall(h.mainCaller(), "toolu_1", tt.in)
			if !res.IsError || !strings.Contains(resultText(res), tt.want) {
				t.Errorf("result (error %v) = %q, want an error with %q", res.IsError, resultText(res), tt.want)
			}
			if n := len(h.requestsOf("general-purpose")); n != 0 {
				t.Errorf("a refused call ran the child %d times", n)
			}
		})
	}
}

// TestAgentCwd: cwd is relative to the caller's directory, becomes the
// child's working directory, and the main workspace stays reachable.
func TestAgentCwd(t *testing.T) {
	var h *harness
	h = newHarness(t, setup{mode: permission.ModeAcceptEdits, script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if req.Agent == "general-purpose" && turn(req) == 0 {
			return replyBlocks(
				use("t1", "Read", fakeIn{FilePath: "here.txt"}),
				use("t2", "Edit", fakeIn{FilePath: filepath.Join(h.dir, "main.txt")}),
			), nil
		}
		return reply("done: " + lastToolResult(req)), nil
	}})
	sub := filepath.Join(h.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "x", Prompt: "p", Cwd: "sub"})
	if res.IsError {
		t.Fatalf("spawn failed: %s", resultText(res))
	}
	calls := h.toolCalls()
	for i := range calls {
		calls[i].SessionID = "" // checked elsewhere
	}
	want := []fakeCall{
		{Tool: "Read", Target: "here.txt", Cwd: sub},
		{Tool: "Edit", Target: filepath.Join(h.dir, "main.txt"), Cwd: sub},
	}
	if d := cmp.Diff(want, calls); d != "" {
		t.Errorf("child's tool calls (-want +got):\n%s", d)
	}
	if sys := h.firstRequest("general-purpose").req.System; !strings.Contains(sys, "Working directory: "+sub) {
		t.Errorf("child's system prompt does not name its cwd %s:\n%s", sub, sys)
	}
}

// TestSA2DeniedListsAllowedNames: a denied named agent is an error that
// lists the agents the caller may use, as an unknown name's does, on every
// surface's spawn tool — so the model can pick a permitted agent instead of
// guessing (S-A2).
func TestSA2DeniedListsAllowedNames(t *testing.T) {
	tests := []struct {
		surface, tool string
		in            any
	}{
		{"claude", "Agent", AgentInput{Description: "deny", Prompt: "go", SubagentType: "secret"}},
		{"opencode", "task", TaskInput{Description: "deny", Prompt: "go", SubagentType: "secret"}},
		{"harness", "agent_spawn", AgentSpawnInput{AgentID: "secret", Task: "go"}},
		{"gateway", "sessions_spawn", SessionsSpawnInput{AgentID: "secret", Task: "go"}},
	}
	for _, tt := range tests {
		t.Run(tt.surface, func(t *testing.T) {
			h := newHarness(t, setup{
				agents: map[string]string{
					"visible": agentFile("visible", "Sees", "", "Look."),
					"stealth": agentFile("stealth", "Hides", "hidden: true\n", "Hide."),
					"secret":  agentFile("secret", "Secret", "", "Shh."),
				},
				task: permission.TaskRules{{Pattern: "secret", Action: permission.ActionDeny}},
				// The gateway names another agent only under allowAgents.
				subagents: config.Subagents{AllowAgents: []string{"*"}},
			})
			c := h.mainCaller()
			res := mustInvokeTool(t, h.allTools(c, tt.surface), tt.tool, c, tt.in)
			text := resultText(res)
			if !res.IsError {
				t.Fatalf("%s spawned a denied agent:\n%s", tt.tool, text)
			}
			for _, w := range []string{"Permission to use Agent denied", "agents you may use: general-purpose, visible"} {
				if !strings.Contains(text, w) {
					t.Errorf("%s's error lacks %q:\n%s", tt.tool, w, text)
				}
			}
			if strings.Contains(text, "stealth") {
				t.Errorf("%s's error names a hidden agent:\n%s", tt.tool, text)
			}
			if n := len(h.requestsOf("secret")); n != 0 {
				t.Errorf("the denied agent called its model %d times", n)
			}
		})
	}
}
