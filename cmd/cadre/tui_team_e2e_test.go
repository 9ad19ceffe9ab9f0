package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// TestTUITeam is issue 26's TUI part through the real binary in tmux: a
// scripted lead plans three tasks (#3 blocked by #1) and adds two
// teammates of different agent types; alice claims #1 and works on it
// (her next reply is held), bob claims #2, completes it and goes idle.
// The status line sums the team up; /team shows the roster and the board;
// Enter on bob opens his transcript; s on alice queues a message she reads
// at her next step, and "@bob text" from the prompt wakes bob with it —
// each seen by the scripted model in that teammate's own conversation.
func TestTUITeam(t *testing.T) {
	aliceHold := make(chan struct{}) // dropped by the fake server when the test ends
	aliceHeard, bobHeard := newBGFlag(), newBGFlag()
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch teammateOf(c) {
		case "alice":
			if c.has("USER-TO-ALICE") {
				aliceHeard.set()
				return testkit.Reply{Text: "ALICE-HEARD"}
			}
			return nextStep(c, []testkit.ToolCall{taskUpdate("1", "status", "in_progress")},
				testkit.Reply{Text: "ALICE-WORKING", Wait: aliceHold})
		case "bob":
			if c.has("USER-TO-BOB") {
				bobHeard.set()
				return testkit.Reply{Text: "BOB-HEARD"}
			}
			return nextStep(c, []testkit.ToolCall{
				taskUpdate("2", "status", "in_progress"),
				taskUpdate("2", "status", "completed"),
			}, testkit.Reply{Text: "BOB-IDLE: the printer is in"})
		case "":
			if c.child() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: a child that is no teammate"}
			}
		default:
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: an unknown teammate"}
		}
		if r, ok := setUpTeam(c, "write the printer", "ALICE-PROMPT: take the parser.", "BOB-PROMPT: take the printer."); ok {
			return r
		}
		return testkit.Reply{Text: "LEAD-ACK"}
	}))
	e.write(".claude/agents/tester.md", testerFile)
	e.set("CADRE_AGENT_TEAMS=1")
	s := e.tui()
	ask(s, "Build the pretty-printer with a team")
	// alice on #1, bob done with #2 and idle: the status line says so.
	s.WaitFor("team: 1 working, 1 idle · 1/3 tasks done", screenWait)

	ask(s, "/team")
	screen := s.WaitFor("Team default · 2 teammates (1 working, 1 idle) · 3 tasks, 1 done", screenWait)
	for _, row := range [][]string{
		{"● alice", "#", "general-purpose", "working", "write the parser"},
		{"○ bob", "#", "tester", "idle"},
		{"In progress (1)"}, {"● #1 write the parser — alice"},
		{"Blocked (1)"}, {"◌ #3 integrate both · waits on #1"},
		{"Completed (1)"}, {"✓ #2 write the printer — bob"},
	} {
		if !rowHolds(screen, row...) {
			t.Errorf("/team has no row with %q:\n%s", row, screen)
		}
	}

	// The roster is in join order, and both joined in one reply: the
	// keys go to whoever is where.
	aliceFirst := rowHolds(screen, "› ● alice")
	if !aliceFirst {
		s.SendKeys("Down")
		s.WaitFor("› ● alice", screenWait)
	}
	// A message to alice from the roster: she is working, so it waits
	// for her next step.
	s.SendKeys("s")
	s.WaitFor("message ›", screenWait)
	s.Type("USER-TO-ALICE: add a test for the parser")
	s.SendKeys("Enter")
	s.WaitFor("Message queued for agent ", screenWait)

	// Bob's transcript, from the roster.
	toBob := "Down"
	if !aliceFirst {
		toBob = "Up"
	}
	s.SendKeys(toBob)
	s.WaitFor("› ○ bob", screenWait)
	s.SendKeys("Enter")
	s.WaitFor("Session tree · tester", screenWait)
	s.WaitFor("BOB-PROMPT: take the printer.", screenWait)
	s.WaitFor("BOB-IDLE: the printer is in", screenWait)
	s.SendKeys("Escape")
	s.WaitFor("Team default", screenWait)
	s.SendKeys("Escape")
	s.WaitFor(inputHint, screenWait)

	// "@bob text" from the prompt: bob is idle, and the message wakes him.
	ask(s, "@bob USER-TO-BOB: run the tests again")
	s.WaitFor("resumed in the background with your message", screenWait)
	waitFlag(t, "bob to read the message typed to him", bobHeard)

	// alice's held step ends: she reads the message at her next one.
	close(aliceHold)
	waitFlag(t, "alice to read the message sent from /team", aliceHeard)
	s.WaitFor("team: 2 idle · 1/3 tasks done", screenWait)
}

// rowHolds reports whether one row of the screen holds every part, in
// order.
func rowHolds(screen string, parts ...string) bool {
	for _, row := range strings.Split(screen, "\n") {
		rest, ok := row, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

// waitFlag waits for f, failing the test after screenWait.
func waitFlag(t *testing.T, what string, f *bgFlag) {
	t.Helper()
	select {
	case <-f.ch:
	case <-t.Context().Done():
		t.Fatalf("the test ended waiting for %s", what)
	case <-time.After(screenWait):
		t.Fatalf("timed out waiting for %s", what)
	}
}
