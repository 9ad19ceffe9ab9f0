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

// A retry of the main agent's model call shows on the status line with
// its reason and a countdown that follows the clock, until the model
// answers.
func TestRetryCountdown(t *testing.T) {
	h := newHarness(t)
	h.update(tea.WindowSizeMsg{Width: 140, Height: 20})
	h.typeText("hello")
	h.press(tea.KeyEnter, 0)
	h.event(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeAPIRetry, Retry: &cadre.RetryInfo{
		Attempt: 1, MaxRetries: 4, Delay: 4 * time.Second, Status: 529, Kind: "overloaded",
	}})
	if s := h.m.status(); !strings.Contains(s, "overloaded (HTTP 529) · retrying in 4s (2/5)") {
		t.Fatalf("the status line does not show the retry: %q", s)
	}
	h.now = h.now.Add(2500 * time.Millisecond)
	h.update(tickMsg{})
	if s := h.m.status(); !strings.Contains(s, "retrying in 2s (2/5)") {
		t.Fatalf("the countdown did not follow the clock: %q", s)
	}
	// A subagent's retry is its own, not the main agent's.
	h.event(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeAPIRetry, ParentToolUseID: "c1", Retry: &cadre.RetryInfo{
		Attempt: 3, MaxRetries: 4, Delay: time.Second, Kind: "rate_limit",
	}})
	if s := h.m.status(); strings.Contains(s, "rate limit") {
		t.Fatalf("a subagent's retry shows as the main agent's: %q", s)
	}
	h.event(partial("Hi"))
	if s := h.m.status(); strings.Contains(s, "retrying") {
		t.Fatalf("the retry stayed after the model answered: %q", s)
	}
}
