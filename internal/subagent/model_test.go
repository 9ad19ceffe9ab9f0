package subagent

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/llm"
)

// TestChildModelChain checks S-A3: call > definition > subagents.model >
// parent; "inherit" is the parent's; a name that does not resolve warns in
// the result and falls back.
func TestChildModelChain(t *testing.T) {
	tests := []struct {
		name         string
		call, def    string
		settings     string
		want         string
		wantWarnings []string
	}{
		{name: "the call's model wins", call: "opus", def: "haiku", settings: "sonnet", want: "opus"},
		{name: "then the definition's", def: "haiku", settings: "sonnet", want: "haiku"},
		{name: "then subagents.model", settings: "sonnet", want: "sonnet"},
		{name: "then the parent's", want: mainModel},
		{name: "definition inherit skips subagents.model", def: "inherit", settings: "sonnet", want: mainModel},
		{name: "call inherit skips the definition's", call: "inherit", def: "haiku", settings: "sonnet", want: mainModel},
		{
			name: "an unresolvable call model falls back to the definition's", call: "gpt-nope", def: "haiku", want: "haiku",
			wantWarnings: []string{`the call's model "gpt-nope" cannot be used (model: config: unknown model "gpt-nope"); falling back`},
		},
		{
			name: "unresolvable models all along fall back to the parent's", call: "x1", def: "x2", settings: "x3", want: mainModel,
			wantWarnings: []string{`the call's model "x1" cannot be used`, `the agent's model "x2" cannot be used`, `subagents.model "x3" cannot be used`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := ""
			if tt.def != "" {
				front = "model: " + tt.def + "\n"
			}
			h := newHarness(t, setup{
				agents:    map[string]string{"probe": agentFile("probe", "Probes", front, "Probe.")},
				subagents: config.Subagents{Model: tt.settings},
			})
			c := h.mainCaller()
			res := h.mustCall(c, "toolu_1", AgentInput{Description: "probe", Prompt: "hi", SubagentType: "probe", Model: tt.call})
			if res.IsError {
				t.Fatalf("spawn failed: %s", resultText(res))
			}
			if got := h.firstRequest("probe").model; got != tt.want {
				t.Errorf("child ran on %q, want %q", got, tt.want)
			}
			text := resultText(res)
			for _, w := range tt.wantWarnings {
				if !strings.Contains(text, "(Note: "+w) {
					t.Errorf("result lacks the warning %q:\n%s", w, text)
				}
			}
			if len(tt.wantWarnings) == 0 && strings.Contains(text, "(Note:") {
				t.Errorf("result has a warning, want none:\n%s", text)
			}
			// The child's usage is booked under the model it ran on.
			_, _, byModel := c.Totals.Snapshot()
			if _, ok := byModel[tt.want]; !ok || len(byModel) != 1 {
				t.Errorf("caller's totals by model = %v, want only %q", byModel, tt.want)
			}
		})
	}
}

// TestCallCannotChooseTheScriptedModel: a model's tool input may not select
// the scripted model, whose name is a file path (Agent{model:
// "script:/etc/passwd"} read the file, issue 8 item 4). The name is never
// resolved — nothing is read — and the child runs on the next model of the
// chain, with a warning that does not quote any file.
func TestCallCannotChooseTheScriptedModel(t *testing.T) {
	for _, name := range []string{"script:/etc/passwd", "script/etc/passwd", " script:notes.yaml"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, setup{
				agents:    map[string]string{"probe": agentFile("probe", "Probes", "model: haiku\n", "Probe.")},
				subagents: config.Subagents{Surface: "claude"},
			})
			var mu sync.Mutex
			var resolved []string
			resolve := h.svc.cfg.Resolve
			h.svc.cfg.Resolve = func(n string) (llm.Model, provider.Ref, error) {
				mu.Lock()
				resolved = append(resolved, n)
				mu.Unlock()
				return resolve(n)
			}
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "probe", Prompt: "hi", SubagentType: "probe", Model: name})
			if res.IsError {
				t.Fatalf("spawn failed: %s", resultText(res))
			}
			if got := h.firstRequest("probe").model; got != "haiku" {
				t.Errorf("child ran on %q, want the definition's haiku", got)
			}
			if slices.Contains(resolved, name) {
				t.Errorf("the call's model %q was resolved (resolved: %q)", name, resolved)
			}
			if text := resultText(res); !strings.Contains(text, "a tool call cannot choose the scripted model") {
				t.Errorf("result lacks the refusal:\n%s", text)
			}
		})
	}
}

// TestSessionsSpawnCannotChooseTheScriptedModel: the gateway's
// sessions_spawn model input obeys the same rule.
func TestSessionsSpawnCannotChooseTheScriptedModel(t *testing.T) {
	h := newProfileHarness(t, setup{}, "gateway")
	var resolved []string
	var mu sync.Mutex
	resolve := h.svc.cfg.Resolve
	h.svc.cfg.Resolve = func(n string) (llm.Model, provider.Ref, error) {
		mu.Lock()
		resolved = append(resolved, n)
		mu.Unlock()
		return resolve(n)
	}
	c := h.mainCaller()
	res := mustInvokeTool(t, h.allTools(c, "gateway"), "sessions_spawn", c, SessionsSpawnInput{Task: "x", Model: "script:/etc/passwd"})
	if !strings.Contains(resultText(res), "a tool call cannot choose the scripted model") {
		t.Errorf("reply lacks the refusal:\n%s", resultText(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(resolved, "script:/etc/passwd") {
		t.Errorf("sessions_spawn's model was resolved")
	}
}

// TestProfileWithoutItsKeyDoesNotFallBack: an agent whose own model is a
// provider profile with its key unset does not start on the parent's
// account: the spawn fails naming the variable, and no request is made.
func TestProfileWithoutItsKeyDoesNotFallBack(t *testing.T) {
	h := newHarness(t, setup{agents: map[string]string{"reviewer": agentFile("reviewer", "Reviews", "model: reviewer-acct:claude-sonnet-5-5\n", "Review.")}})
	resolve := h.svc.cfg.Resolve
	h.svc.cfg.Resolve = func(n string) (llm.Model, provider.Ref, error) {
		if n == "reviewer-acct:claude-sonnet-5-5" {
			return nil, provider.Ref{}, &llm.Error{Kind: llm.ErrAuth, Provider: "reviewer-acct", Message: "REVIEWER_KEY is not set (providers.reviewer-acct.apiKeyEnv names it)"}
		}
		return resolve(n)
	}
	res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "review", Prompt: "hi", SubagentType: "reviewer"})
	if !res.IsError || !strings.Contains(resultText(res), "REVIEWER_KEY is not set") {
		t.Errorf("spawn = %v %s, want an error naming REVIEWER_KEY", res.IsError, resultText(res))
	}
	if r := h.requestsOf("reviewer"); len(r) != 0 {
		t.Errorf("the reviewer ran %d requests on another account", len(r))
	}
}
