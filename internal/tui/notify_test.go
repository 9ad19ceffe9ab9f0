package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// A background run that ends gets a line of its own, before the main
// agent speaks again about it; a foreground run's end does not (its own
// line says it), nor does a grandchild's (its parent is told, not the
// main agent), and a failure says how it ended.
func TestBackgroundRunEndAnnounced(t *testing.T) {
	h := newHarness(t)
	h.typeText("Look into it")
	h.press(tea.KeyEnter, 0)
	h.event(assistant("", 10, llm.Text("Starting two."),
		toolUse("b1", "Agent", map[string]any{"description": "subtask 1", "run_in_background": true}),
		toolUse("f1", "Agent", map[string]any{"description": "inline check"}),
		toolUse("b2", "Agent", map[string]any{"description": "subtask 2", "run_in_background": true}),
	))
	h.event(taskStarted("b1", "a1", "general-purpose", "subtask 1", 1, true))
	h.event(taskStarted("f1", "a2", "general-purpose", "inline check", 1, false))
	h.event(taskStarted("b2", "a3", "general-purpose", "subtask 2", 1, true))
	h.event(assistant("b1", 1, toolUse("g1", "Agent", map[string]any{"description": "deeper", "run_in_background": true})))
	h.event(taskStarted("g1", "a4", "explorer", "deeper", 2, true))
	h.now = t0.Add(10 * time.Second)
	h.event(taskEnded("g1", cadre.TaskCompleted, 300, 1))
	h.event(taskEnded("f1", cadre.TaskCompleted, 500, 1))
	h.event(result())
	h.event(taskEnded("b1", cadre.TaskCompleted, 1200, 3))
	h.event(taskEnded("b1", cadre.TaskCompleted, 1200, 3)) // a repeat says nothing more
	h.now = t0.Add(12 * time.Second)
	h.event(taskEnded("b2", cadre.TaskFailed, 50, 0))
	h.event(assistant("", 10, llm.Text("Subtask 1 found it.")))
	s := h.m.Screen()
	lines := strings.Split(s, "\n")
	at := func(text string) int {
		for i, l := range lines {
			if strings.Contains(l, text) {
				return i
			}
		}
		return -1
	}
	done, failed, spoke := at("● subtask 1 finished · 10s · 1.2k tokens"), at("● subtask 2 failed · 12s · 50 tokens"), at("Subtask 1 found it.")
	if done < 0 || failed < 0 || spoke < 0 || !(done < failed && failed < spoke) {
		t.Fatalf("want the two ends announced in order before the answer (rows %d, %d, %d):\n%s", done, failed, spoke, s)
	}
	if n := strings.Count(s, "● "); n != 2 {
		t.Errorf("%d runs announced, want the two background children of the main agent:\n%s", n, s)
	}
}
