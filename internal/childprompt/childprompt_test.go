package childprompt

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/contextfiles"
)

// TestSystem: a child's prompt holds its base, its environment and its
// role, built once per name, base, workspace and day; one with a memory
// section is built each time, with the section.
func TestSystem(t *testing.T) {
	var s Systems
	day := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dir := t.TempDir()
	p := s.System("reviewer", "Review code.", "", dir, day)
	if !strings.HasPrefix(p, "Review code.") || !strings.Contains(p, dir) || !strings.Contains(p, `You are the "reviewer" agent`) {
		t.Fatalf("system prompt:\n%s", p)
	}
	n := 0
	s.cache.Range(func(any, any) bool { n++; return true })
	s.System("reviewer", "Review code.", "", dir, day.Add(time.Hour))
	s.System("reviewer", "Review code.", "# Your memory\nremember", dir, day)
	m := 0
	s.cache.Range(func(any, any) bool { m++; return true })
	if n != 1 || m != 1 {
		t.Errorf("cached prompts: %d, then %d; want 1, 1 (same day shares; memory never cached)", n, m)
	}
	if p := s.System("reviewer", "Review code.", "# Your memory\nremember", dir, day); !strings.Contains(p, "Review code.\n\n# Your memory\nremember") {
		t.Errorf("prompt with memory:\n%s", p)
	}
	s.System("reviewer", "Review code.", "", dir, day.AddDate(0, 0, 1))
	m = 0
	s.cache.Range(func(any, any) bool { m++; return true })
	if m != 2 {
		t.Errorf("a new day shares the old prompt: %d cached", m)
	}
}

// TestPreamble (S-E4): a fork opens with every context file; another
// child with AGENTS.md and TOOLS.md, and the CLAUDE.md files only in
// Claude Code's format (general-purpose included) without omitClaudeMd.
func TestPreamble(t *testing.T) {
	files := []contextfiles.File{
		{Path: "/w/CLAUDE.md", Kind: "project", Content: "claude rules"},
		{Path: "/w/AGENTS.md", Kind: "project", Content: "agents rules", Subagents: true},
	}
	text := func(fork bool, def agent.Definition) string {
		var b strings.Builder
		for _, bl := range Preamble(files, def, fork) {
			b.WriteString(bl.Text)
		}
		return b.String()
	}
	claude := agent.Definition{Name: "c", Format: agent.FormatClaude}
	omit := claude
	omit.OmitClaudeMD = true
	for _, tc := range []struct {
		name        string
		fork        bool
		def         agent.Definition
		claudeRules bool
		agentsRules bool
	}{
		{"a fork", true, agent.Definition{Name: "x", Format: agent.FormatHarness}, true, true},
		{"Claude Code's format", false, claude, true, true},
		{"general-purpose", false, agent.GeneralPurpose(), true, true},
		{"omitClaudeMd", false, omit, false, true},
		{"another format", false, agent.Definition{Name: "h", Format: agent.FormatHarness}, false, true},
	} {
		got := text(tc.fork, tc.def)
		if strings.Contains(got, "claude rules") != tc.claudeRules || strings.Contains(got, "agents rules") != tc.agentsRules {
			t.Errorf("%s: preamble %q", tc.name, got)
		}
	}
}

// TestContext (S-A5): the main agent's block names its agents and the
// tool that reaches them, and lists the session's tasks; nothing to say
// is no block.
func TestContext(t *testing.T) {
	if got := Context(nil, "Agent", nil); got != "" {
		t.Fatalf("an empty context: %q", got)
	}
	got := Context([]string{"explore", "reviewer"}, "Agent", []Task{{ID: "t1", Name: "bob", Agent: "explore", Description: "look", Status: "running", Age: "5s"}})
	for _, want := range []string{"<subagents>", "with the Agent tool: explore, reviewer.", `- t1 "bob": explore, "look", running, started 5s ago`, "</subagents>"} {
		if !strings.Contains(got, want) {
			t.Errorf("context lacks %q:\n%s", want, got)
		}
	}
}
