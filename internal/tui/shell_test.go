package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
)

// "!command" goes to the conversation's Shell (its permission checks and
// sandbox are the runtime's), shows as a Bash call, and the turn's result
// is its output; not while a turn runs, and not without a command.
func TestShellMode(t *testing.T) {
	h := newHarness(t)
	h.typeText("!ls -a")
	h.press(tea.KeyEnter, 0)
	if len(h.conv.shells) != 1 || h.conv.shells[0] != "ls -a" || len(h.conv.sent) != 0 {
		t.Fatalf("shells %q, sent %q: want the command run as a shell command only", h.conv.shells, h.conv.sent)
	}
	if s := h.m.Screen(); !strings.Contains(s, "› !ls -a") || !strings.Contains(s, "Bash(ls -a)") {
		t.Fatalf("the command is not shown as a Bash call:\n%s", s)
	}
	h.typeText("!pwd")
	h.press(tea.KeyEnter, 0)
	if len(h.conv.shells) != 1 || !strings.Contains(h.m.Screen(), "A turn is running") {
		t.Fatalf("a ! command while one runs: shells %q\n%s", h.conv.shells, h.m.Screen())
	}
	h.event(cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultSuccess, Result: &cadre.ResultInfo{Result: "a.go\nb.go\n"}})
	s := h.m.Screen()
	if !strings.Contains(s, "⎿ a.go (+1 lines") || strings.Count(s, "a.go") != 1 {
		t.Fatalf("the output is not the call's result (once):\n%s", s)
	}
	h.event(cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultSuccess, Result: &cadre.ResultInfo{Result: "unrelated"}})
	h.typeText("!rm -rf build")
	h.press(tea.KeyEnter, 0)
	h.event(cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultDuringExecution, Result: &cadre.ResultInfo{IsError: true, Errors: []string{"!rm -rf build was not run: Permission to use Bash has been denied."}}})
	if s := h.m.Screen(); !strings.Contains(s, "⎿ !rm -rf build was not run") {
		t.Fatalf("a refused command does not say so under its call:\n%s", s)
	}
	h.typeText("!  ")
	h.press(tea.KeyEnter, 0)
	if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, "needs a command") {
		t.Fatalf("an empty ! command: %+v", last)
	}
}
