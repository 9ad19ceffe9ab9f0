package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// The TUI's commands and session tree through the real binary (issue 11
// items 5 and 6): a background subagent held by the fake server is
// listed, opened live in the tree, messaged, and stopped.

func TestTUISubagentsTasksTreeAndStop(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	defer close(hold)
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "never said", Wait: hold}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "Noted the stopped survey."}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("call-survey", "Survey the attic", "SURVEY-ATTIC-TASK")}}
		}
		return testkit.Reply{Text: "The survey runs in the background."}
	}))
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code for defects.\n---\nYou review.\n")
	s := e.tui()
	ask(s, "Start the survey")
	s.WaitFor("The survey runs in the background.", screenWait)

	ask(s, "/subagents list")
	screen := s.WaitFor("Subagents: 1 running", screenWait)
	if rows := rowsWith(screen, "Survey the attic"); len(rows) == 0 || !strings.Contains(rows[len(rows)-1], "#1") || !strings.Contains(rows[len(rows)-1], "running") {
		t.Errorf("/subagents list does not show #1 running:\n%s", screen)
	}
	ask(s, "/tasks")
	screen = s.WaitFor("/tasks output #N", screenWait)
	if rows := rowsWith(screen, "Survey the attic"); len(rows) < 2 || !strings.Contains(rows[len(rows)-1], "running") {
		t.Errorf("/tasks does not show the running task by its description:\n%s", screen)
	}
	ask(s, "/agents")
	screen = s.WaitFor("/agents show NAME", screenWait)
	if rows := rowsWith(screen, "reviewer"); len(rows) == 0 || !strings.Contains(rows[0], ".claude/agents/reviewer.md") || !strings.Contains(rows[0], "active") {
		t.Errorf("/agents does not list the project's reviewer:\n%s", screen)
	}

	// Ctrl+T: the running subagent's own session, its prompt in view. The
	// transcript and the tree around it load apart: wait for both.
	s.SendKeys("C-t")
	s.WaitFor("SURVEY-ATTIC-TASK", screenWait)
	screen = s.WaitFor("Session tree · general-purpose · Survey the attic · running", screenWait)
	for _, want := range []string{"SURVEY-ATTIC-TASK", "parent: main", "p parent", "s send a message"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the tree screen lacks %q:\n%s", want, screen)
		}
	}
	s.Type("s")
	s.Type("also count the boxes")
	s.SendKeys("Enter")
	s.WaitFor("Message queued for agent", screenWait)
	s.SendKeys("Escape")
	s.WaitFor(inputHint, screenWait)

	ask(s, "/subagents stop #1")
	s.WaitFor("Stopped 1 subagent", screenWait)
	s.WaitFor("Noted the stopped survey.", screenWait)
	ask(s, "/subagents list")
	s.WaitFor("Subagents: 0 running · 1 done", screenWait)
}

// /clear opens a fresh session in the same TUI; /resume lists the earlier
// one and reopens it with its transcript.
func TestTUIClearAndResume(t *testing.T) {
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "Answered: remember PELICAN."}
	})
	s := e.tui()
	ask(s, "Say the word")
	s.WaitFor("Answered: remember PELICAN.", screenWait)
	ask(s, "/clear")
	s.WaitUntil("a fresh session", screenWait, func(screen string) bool {
		return strings.Contains(screen, inputHint) && !strings.Contains(screen, "PELICAN")
	})
	ask(s, "/resume")
	screen := s.WaitFor("Resume a session", screenWait)
	// The earlier session, and not the one open now (no turns yet).
	if rows := rowsWith(screen, " turns"); len(rows) != 1 || !strings.Contains(rows[0], "› ") || !strings.Contains(rows[0], "1 turns") {
		t.Errorf("the resume screen does not offer the earlier session alone:\n%s", screen)
	}
	s.SendKeys("Enter")
	s.WaitFor("Answered: remember PELICAN.", screenWait)
}

// /agents create writes the agent from the short form, and it is in
// effect at once: @tester runs it with its own prompt.
func TestTUIAgentsCreateThenRun(t *testing.T) {
	const mark = "TESTER-PROMPT-MARK"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if strings.Contains(c.system, mark) {
			return testkit.Reply{Text: "Tester: three tests written."}
		}
		return testkit.Reply{Text: "TEST: not the tester's request: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "/agents create tester")
	s.WaitFor("New agent", screenWait)
	s.SendKeys("Tab")
	s.Type("Writes tests")
	s.SendKeys("Tab", "Tab", "Tab")
	s.Type("You are " + mark + ".")
	s.SendKeys("Enter")
	s.WaitFor("Created agent tester in .cadre/agents/tester.md", screenWait)
	got, err := os.ReadFile(filepath.Join(e.dir, ".cadre", "agents", "tester.md"))
	if err != nil || !strings.Contains(string(got), "description: Writes tests") || !strings.Contains(string(got), mark) {
		t.Fatalf("tester.md = %q, %v", got, err)
	}
	ask(s, "@tester write the tests")
	s.WaitFor("Tester: three tests written.", screenWait)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want the tester's one", n)
	}
	// A second create of the same name is refused on the form.
	ask(s, "/agents create tester")
	s.WaitFor("New agent", screenWait)
	s.SendKeys("Tab")
	s.Type("Again")
	s.SendKeys("C-s")
	s.WaitFor("exists already", screenWait)
	s.SendKeys("Escape")
	s.WaitFor("cancelled, nothing written", screenWait)
}
