package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/tmux"
)

// The TUI's problems of issue 25, each shown fixed through the real
// binary in tmux, as a user would meet them.

// Ctrl+C interrupts a turn whose reply never comes, and the conversation
// goes on; on the idle prompt the "press again" hint goes away by itself,
// so a stray Ctrl+C later warns again instead of quitting.
func TestTUICtrlCInterruptsAndTheHintExpires(t *testing.T) {
	s := interruptedTurn(t, "C-c")
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

// numberOf is the "#N" that starts the row of a table holding desc.
func numberOf(screen, desc string) string {
	for _, row := range rowsWith(screen, desc) {
		if f := strings.Fields(row); len(f) > 0 && strings.HasPrefix(f[0], "#") {
			return f[0]
		}
	}
	return ""
}

// A background subagent that finishes says so on a line of its own while
// the main agent's reply to its notification is still held; /tasks and
// /subagents give it the same number, and /tasks stop #N names that run.
func TestTUIBackgroundEndShownAndOneNumbering(t *testing.T) {
	bgHold, replyHold := make(chan struct{}), make(chan struct{}) // dropped by the fake server when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && c.has("FG-TASK"):
			return testkit.Reply{Text: "looked around"}
		case c.child() && c.has("BG-TASK"):
			return testkit.Reply{Text: "subtask done", Wait: bgHold}
		case c.child():
			return testkit.Reply{Text: "TEST: unexpected child request"}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "The subtask reported back.", Wait: replyHold}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				fgAgentCall("Look around", "FG-TASK", "general-purpose"),
			}}
		case len(c.uses("Agent")) == 1:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("bg1", "Subtask one", "BG-TASK")}}
		}
		return testkit.Reply{Text: "Started the subtask in the background."}
	}))
	s := e.tui()
	ask(s, "Look, then start the subtask")
	s.WaitFor("Started the subtask in the background.", screenWait)

	ask(s, "/subagents list")
	sub := numberOf(s.WaitFor("Subagents: 1 running · 1 done", screenWait), "Subtask one")
	ask(s, "/tasks")
	tasks := numberOf(s.WaitFor("/tasks output #N", screenWait), "Subtask one")
	if sub != "#2" || tasks != sub {
		t.Errorf("the background run is %q in /subagents and %q in /tasks, want #2 in both", sub, tasks)
	}
	ask(s, "/tasks stop #1")
	s.WaitFor("subagent #1 ran in the foreground", screenWait)

	close(bgHold)
	screen := s.WaitFor("● Subtask one finished · ", screenWait)
	if strings.Contains(screen, "The subtask reported back.") {
		t.Errorf("the main agent's reply came before it was released:\n%s", screen)
	}
	close(replyHold)
	screen = s.WaitFor("The subtask reported back.", screenWait)
	rows := strings.Split(screen, "\n")
	line, reply := -1, -1
	for i, r := range rows {
		if strings.Contains(r, "● Subtask one finished") {
			line = i
		}
		if strings.Contains(r, "The subtask reported back.") {
			reply = i
		}
	}
	if line < 0 || line > reply {
		t.Errorf("the finished line (row %d) is not above the reply (row %d):\n%s", line, reply, screen)
	}
	if !regexp.MustCompile(`● Subtask one finished · \d+s · [\d.]+k? tokens`).MatchString(screen) {
		t.Errorf("the finished line lacks its time and tokens:\n%s", screen)
	}
}

// Twenty children, eight quick and twelve held, in a 24-row terminal: the
// twelve running rows all show though the quick ones were called first,
// and what does not fit is the finished ones, summed up.
func TestTUIFanOutShowsRunningFirst(t *testing.T) {
	const quick, held = 8, 12
	hold := make(chan struct{}) // dropped by the fake server when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && c.has("QUICK"):
			return testkit.Reply{Text: "quick answer"}
		case c.child():
			return testkit.Reply{Text: "held answer", Wait: hold}
		case !c.anyToolResult():
			var calls []testkit.ToolCall
			for i := 1; i <= quick; i++ {
				calls = append(calls, fgAgentCall(fmt.Sprintf("Quick part %02d", i), "QUICK", "general-purpose"))
			}
			for i := 1; i <= held; i++ {
				calls = append(calls, fgAgentCall(fmt.Sprintf("Held part %02d", i), "HELD", "general-purpose"))
			}
			return testkit.Reply{ToolCalls: calls}
		}
		return testkit.Reply{Text: "All parts answered."}
	}))
	s := tmux.Start(e.t, tmux.Options{Dir: e.dir, Env: e.vars, Height: 24}, bin, "--model", sonnet)
	s.WaitFor(inputHint, screenWait)
	ask(s, "Survey all parts")
	// Whether every running part shows is the test: wait for the state
	// (all quick parts done, every held one running), then read it.
	screen := s.WaitUntil("the quick parts done, the held ones running", screenWait, func(screen string) bool {
		return strings.Contains(screen, fmt.Sprintf("working · %d subagents", held)) &&
			strings.Count(screen, "✓ general-purpose Quick part") > 0 && !strings.Contains(screen, "Agent(")
	})
	for i := 1; i <= held; i++ {
		if d := fmt.Sprintf("Held part %02d", i); !runsOn(screen, d) {
			t.Errorf("running %q has no row:\n%s", d, screen)
		}
	}
	// 19 rows for runs: the 12 running, 7 of the 8 done, one summed up.
	if !strings.Contains(screen, "… 1 more subagents (0 running, 1 done)") {
		t.Errorf("the finished runs are not the ones summed up:\n%s", screen)
	}
	if !strings.Contains(screen, inputHint) {
		t.Errorf("the input left the screen:\n%s", screen)
	}
	close(hold)
	s.WaitFor("All parts answered.", screenWait)
}

// The mouse wheel scrolls a long answer back into view and down again;
// after quitting, the conversation is on the terminal's own screen, not
// lost with the alternate one.
func TestTUIWheelScrollsAndTheConversationStaysOnExit(t *testing.T) {
	var rows []string
	for i := 1; i <= 60; i++ {
		rows = append(rows, fmt.Sprintf("- row %02d", i))
	}
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		return testkit.Reply{Text: strings.Join(rows, "\n")}
	}))
	s := e.tui()
	ask(s, "Show me sixty rows")
	atEnd := func(screen string) bool {
		return strings.Contains(screen, "row 60") && !strings.Contains(screen, "row 05") && !strings.Contains(screen, "working")
	}
	s.WaitUntil("the answer's end in view", screenWait, atEnd)
	for range 10 {
		s.Wheel(true, 10, 10)
	}
	s.WaitUntil("the answer's start scrolled into view", screenWait, func(screen string) bool {
		return strings.Contains(screen, "row 05") && !strings.Contains(screen, "row 60")
	})
	for range 10 {
		s.Wheel(false, 10, 10)
	}
	s.WaitUntil("the answer's end back in view", screenWait, atEnd)

	s.SendKeys("C-c")
	s.WaitFor("Press Ctrl+C again to quit", screenWait)
	s.SendKeys("C-c")
	if status := s.WaitExit(screenWait); status != 0 {
		t.Errorf("cadre quit with status %d, want 0", status)
	}
	screen := s.Capture()
	for _, want := range []string{"row 30", "row 60", "cadre -r "} {
		if !strings.Contains(screen, want) {
			t.Errorf("after quitting the terminal lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, inputHint) {
		t.Errorf("the TUI's input is still on the screen after quitting:\n%s", screen)
	}
}

// The first screen says where cadre runs and on which model; "?" on the
// empty prompt opens the shortcut sheet and Esc closes it.
func TestTUIWelcomeAndShortcutSheet(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply { return testkit.Reply{Text: "hello"} }))
	s := e.tui()
	screen := s.Capture()
	welcome := rowsWith(screen, "✻ cadre · ")
	if len(welcome) != 1 || !strings.Contains(welcome[0], filepath.Base(e.dir)) || !strings.Contains(welcome[0], sonnet) {
		t.Errorf("no welcome line with the directory %s and the model %s:\n%s", e.dir, sonnet, screen)
	}
	s.Type("?")
	s.WaitFor("shell command", screenWait)
	s.SendKeys("Escape")
	s.WaitUntil("the sheet closed", screenWait, func(screen string) bool { return !strings.Contains(screen, "shell command") })
}

// "@mai" completes to main.go with Tab, and the model reads the file with
// the message; a mention that leaves the workspace — by "..", or by a link
// inside that points out — is refused on screen and never reaches the
// model.
func TestTUIFileMentions(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		// An attachment is a <system-reminder> block: the decoder keeps
		// those apart from the messages.
		seen := strings.Join(c.reminders, "\n") + c.dump()
		switch {
		case strings.Contains(seen, "OUTSIDE-SECRET") || strings.Contains(seen, "root:"):
			return testkit.Reply{Text: "LEAKED"}
		case strings.Contains(seen, "The fruit is MANGO.") && c.has("which fruit?"):
			return testkit.Reply{Text: "The file names the fruit mango."}
		}
		return testkit.Reply{Text: "TEST: no attachment in " + c.dump()}
	}))
	e.write("main.go", "package main\n\n// The fruit is MANGO.\nfunc main() {}\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.dir, "notes.link")); err != nil {
		t.Fatal(err)
	}
	s := e.tui()
	for _, line := range []string{"@../../../../../../etc/passwd what is this?", "what does @notes.link say?"} {
		ask(s, line)
		s.WaitFor("outside the workspace", screenWait)
		s.SendKeys("C-u") // the next line starts clean whatever is left
	}
	s.Type("@mai")
	s.WaitFor("main.go", screenWait)
	s.SendKeys("Tab")
	s.WaitFor("› @main.go", screenWait)
	ask(s, "which fruit?")
	screen := s.WaitFor("The file names the fruit mango.", screenWait)
	if !strings.Contains(screen, "attached main.go (4 lines)") {
		t.Errorf("the transcript does not say main.go was attached:\n%s", screen)
	}
	if strings.Contains(screen, "LEAKED") {
		t.Errorf("a file outside the workspace reached the model:\n%s", screen)
	}
}

// An overloaded model is retried with a countdown on the status line —
// the reason, the seconds left and the attempt — not a bare spinner; the
// answer of the retry follows.
func TestTUIRetryCountdown(t *testing.T) {
	var calls atomic.Int32
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		if calls.Add(1) == 1 {
			return testkit.Reply{Status: 529, Header: map[string]string{"retry-after": "3"}}
		}
		return testkit.Reply{Text: "Recovered after the retry."}
	})
	s := e.tui()
	ask(s, "Are you up?")
	screen := s.WaitFor("retrying in ", screenWait)
	if !regexp.MustCompile(`overloaded \(HTTP 529\) · retrying in [1-3]s \(2/5\)`).MatchString(screen) {
		t.Errorf("the status line does not count down to the retry:\n%s", screen)
	}
	screen = s.WaitFor("Recovered after the retry.", screenWait)
	if strings.Contains(screen, "retrying in") {
		t.Errorf("the countdown stayed after the answer:\n%s", screen)
	}
}

// "!command" is no side door around the Bash tool's gates: a deny rule
// refuses it without a prompt, the default mode asks, a denial runs
// nothing; an allowed one runs, shows its output, and the model sees the
// command and its output with the next message (and was asked nothing
// for the commands themselves).
func TestTUIShellModeGoesThroughPermissions(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		all := c.dump()
		switch {
		case strings.Contains(all, "shell-ran") || strings.Contains(all, "rm -f keep.txt"):
			return testkit.Reply{Text: "TEST: a refused command reached the model: " + all}
		case strings.Contains(all, "<bash-input>printf SHELL-OUT-42</bash-input>") && strings.Contains(all, "SHELL-OUT-42\n</bash-output>"):
			return testkit.Reply{Text: "Your command printed 42."}
		}
		return testkit.Reply{Text: "TEST: no shell command in " + all}
	}))
	e.write(".cadre/settings.json", `{"permissions": {"deny": ["Bash(rm:*)"]}}`)
	e.write("keep.txt", "keep me\n")
	s := e.tui()

	ask(s, "!rm -f keep.txt")
	s.WaitFor("!rm -f keep.txt was not run", screenWait)
	if _, err := os.Stat(filepath.Join(e.dir, "keep.txt")); err != nil {
		t.Fatalf("a denied rm ran: %v", err)
	}

	ask(s, "!printf shell-ran > shell.txt")
	screen := s.WaitFor("wants to use Bash", screenWait)
	if !strings.Contains(screen, "printf shell-ran > shell.txt") {
		t.Errorf("the prompt does not show the command:\n%s", screen)
	}
	s.SendKeys("Escape")
	s.WaitFor("!printf shell-ran > shell.txt was not run", screenWait)
	if _, err := os.Stat(filepath.Join(e.dir, "shell.txt")); err == nil {
		t.Fatal("a denied ! command ran")
	}

	ask(s, "!printf SHELL-OUT-42")
	s.WaitFor("wants to use Bash", screenWait)
	s.Type("y")
	s.WaitFor("⎿ SHELL-OUT-42", screenWait)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests for ! commands, want none", n)
	}
	ask(s, "What did my command print?")
	s.WaitFor("Your command printed 42.", screenWait)
}
