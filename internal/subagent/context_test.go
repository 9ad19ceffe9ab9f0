package subagent

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/contextfiles"
)

// TestSE4SubagentContext: the main agent's context files reach a subagent
// by the rule of S-E4 — AGENTS.md and TOOLS.md always (the gateway's
// rule), the CLAUDE.md family only where Claude Code gives a subagent its
// CLAUDE.md: an agent in its format, or general-purpose, unless it says
// omitClaudeMd. A fork gets the parent's whole block.
func TestSE4SubagentContext(t *testing.T) {
	const (
		claudeRule = "CLAUDE-RULE: answer in haiku."
		localRule  = "LOCAL-RULE: my private notes."
		agentsRule = "AGENTS-RULE: run go vet."
		toolsRule  = "TOOLS-RULE: use rg, not grep."
	)
	tests := []struct {
		name, agent string
		claude      bool // the CLAUDE.md family reaches it
	}{
		{name: "a Claude Code agent", agent: "reviewer", claude: true},
		{name: "general-purpose, Claude Code's own", agent: "general-purpose", claude: true},
		{name: "omitClaudeMd", agent: "lean", claude: false},
		{name: "an OpenCode agent", agent: "oc", claude: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{
				agents: map[string]string{
					"reviewer": agentFile("reviewer", "Reviews", "", "Review."),
					"lean":     agentFile("lean", "Needs only its prompt", "omitClaudeMd: true\n", "Lean."),
				},
				opencodeAgents: map[string]string{"oc": "---\ndescription: An OpenCode agent\nmode: subagent\n---\nOC.\n"},
			})
			files := []contextfiles.File{
				{Path: filepath.Join(h.dir, "CLAUDE.md"), Kind: contextfiles.KindProject, Content: claudeRule},
				{Path: filepath.Join(h.dir, "AGENTS.md"), Kind: contextfiles.KindProject, Content: agentsRule, Subagents: true},
				{Path: filepath.Join(h.dir, "TOOLS.md"), Kind: contextfiles.KindProject, Content: toolsRule, Subagents: true},
				{Path: filepath.Join(h.dir, "CLAUDE.local.md"), Kind: contextfiles.KindLocal, Content: localRule},
			}
			h.svc.cfg.ContextFiles = files
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "context", Prompt: "go", SubagentType: tt.agent})
			if res.IsError {
				t.Fatalf("spawn: %s", resultText(res))
			}
			raw, err := json.Marshal(h.firstRequest(tt.agent).req.Messages[0])
			if err != nil {
				t.Fatal(err)
			}
			first := string(raw)
			for _, rule := range []string{agentsRule, toolsRule} {
				if !strings.Contains(first, rule) {
					t.Errorf("%s's first message lacks %q:\n%s", tt.agent, rule, first)
				}
			}
			for _, rule := range []string{claudeRule, localRule} {
				if got := strings.Contains(first, rule); got != tt.claude {
					t.Errorf("%s's first message holds %q: %v, want %v:\n%s", tt.agent, rule, got, tt.claude, first)
				}
			}
		})
	}
}
