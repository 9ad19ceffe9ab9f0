package main

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// The TUI's problems of issue 25, each shown fixed through the real
// binary in tmux, as a user would meet them.

// Ctrl+C interrupts a turn whose reply never comes, and the conversation
// goes on; on the idle prompt the "press again" hint goes away by itself,
// so a stray Ctrl+C later warns again instead of quitting.
func TestTUICtrlCInterruptsAndTheHintExpires(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.has("Are you there?") {
			return testkit.Reply{Text: "Here now."}
		}
		return testkit.Reply{Stall: testkit.StallNoResponse}
	}))
	s := e.tui()
	ask(s, "This is never answered")
	s.WaitFor("(esc stops)", screenWait)
	s.SendKeys("C-c")
	s.WaitUntil("the turn interrupted and nothing running", screenWait, func(screen string) bool {
		return strings.Contains(screen, "Interrupted.") && !strings.Contains(screen, "working")
	})
	// The hint of that press expires without a key.
	s.WaitUntil("the quit hint gone", screenWait, func(screen string) bool {
		return !strings.Contains(screen, "Press Ctrl+C again to quit")
	})
	ask(s, "Are you there?")
	s.WaitFor("Here now.", screenWait)

	s.SendKeys("C-c")
	s.WaitFor("Press Ctrl+C again to quit", screenWait)
	s.WaitUntil("the quit hint gone", screenWait, func(screen string) bool {
		return !strings.Contains(screen, "Press Ctrl+C again to quit")
	})
	// A press after it expired only warns again: the TUI is still there.
	s.SendKeys("C-c")
	s.WaitFor("Press Ctrl+C again to quit", screenWait)
	s.SendKeys("C-c")
	if status := s.WaitExit(screenWait); status != 0 {
		t.Errorf("cadre quit with status %d, want 0", status)
	}
}
