package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReport: every agent file that fails to load or has warnings is
// reported once, with its first problem's file:line, whatever the number
// of problems in it; files that load cleanly are not mentioned (issue 8,
// item 12).
func TestReport(t *testing.T) {
	root := tree(t, map[string]string{
		".claude/agents/broken.md": "---\nname: broken\ntools: [Read\n---\nBody.\n",
		".claude/agents/noisy.md":  "---\nname: noisy\ndescription: Noisy\ncolour: red\nsize: 3\n---\nBody.\n",
		".claude/agents/fine.md":   "---\nname: fine\ndescription: Fine\n---\nBody.\n",
		".claude/agents/nodesc.md": "---\nname: nodesc\n---\nBody.\n",
	})
	r := Load(LoadOptions{Cwd: root})
	got := r.Report()
	dir := filepath.Join(root, ".claude", "agents")
	want := []string{
		"agents: " + filepath.Join(dir, "broken.md") + ":",
		"agents: " + filepath.Join(dir, "nodesc.md") + ":",
		"agents: " + filepath.Join(dir, "noisy.md") + ":4: unknown field",
	}
	if len(got) != len(want) {
		t.Fatalf("report has %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, got[i], w)
		}
	}
	if !strings.Contains(got[0], "not loaded") || !strings.Contains(got[1], "not loaded") {
		t.Errorf("an invalid file's line does not say it was skipped:\n%s", strings.Join(got, "\n"))
	}
	if !strings.Contains(got[2], "(and 1 more)") || strings.Contains(got[2], "not loaded") {
		t.Errorf("noisy.md's line = %q, want its first warning and a count of the rest", got[2])
	}
	if d := cmp.Diff(got, r.Report()); d != "" {
		t.Errorf("a second report differs (-first +second):\n%s", d)
	}
}
