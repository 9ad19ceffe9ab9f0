package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/tmux"
	"github.com/cadre-dev/cadre/llm"
)

// These tests drive the interactive TUI (issue 11's acceptance) through
// the real binary in a private tmux server sized 140×45, against the fake
// Anthropic server. They read the screen as a user would; ordering comes
// from held replies and from waiting on the screen, never from sleeps.

// screenWait bounds every wait on the screen; a test moves on as soon as
// the screen shows what it waits for.
const screenWait = 30 * time.Second

// inputHint is on the input line of the conversation screen.
const inputHint = "Message cadre"

// tui starts cadre with no -p in e's project, in tmux, and waits for the
// first interactive screen.
func (e *env) tui(args ...string) *tmux.Session {
	e.t.Helper()
	s := tmux.Start(e.t, tmux.Options{Dir: e.dir, Env: e.vars}, append([]string{bin, "--model", sonnet}, args...)...)
	s.WaitFor(inputHint, screenWait)
	return s
}

// ask types a message and sends it.
func ask(s *tmux.Session, text string) {
	s.Type(text)
	s.SendKeys("Enter")
}

// rowsWith are the screen's rows that hold s.
func rowsWith(screen, s string) []string {
	var out []string
	for _, row := range strings.Split(screen, "\n") {
		if strings.Contains(row, s) {
			out = append(out, row)
		}
	}
	return out
}

// runsOn reports whether the screen shows a subagent line for desc that
// has not finished: a finished run's line starts with ✓ or ✗, and a row
// starting with › is a message that merely mentions desc.
func runsOn(screen, desc string) bool {
	for _, row := range rowsWith(screen, desc) {
		t := strings.TrimSpace(row)
		if !strings.HasPrefix(t, "✓") && !strings.HasPrefix(t, "✗") && !strings.HasPrefix(t, "›") {
			return true
		}
	}
	return false
}

// fgAgentCall is a foreground Agent call.
func fgAgentCall(description, prompt, agent string) testkit.ToolCall {
	return testkit.ToolCall{Name: "Agent", Input: map[string]any{"description": description, "prompt": prompt, "subagent_type": agent}}
}

// A conversation: a question, the tool call it takes, the answer, the
// status line's figures, Ctrl+O, and Ctrl+C twice to quit.
func TestTUIConversation(t *testing.T) {
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		r := readThenAnswer(req)
		r.Usage = llm.Usage{InputTokens: 1000, OutputTokens: 200}
		return r
	})
	s := e.tui()
	ask(s, secretAsk)
	// The status line's figures are the turn's once it has ended.
	screen := s.WaitUntil("the answer, and the turn over", screenWait, func(screen string) bool {
		return strings.Contains(screen, secretSays) && !strings.Contains(screen, "working")
	})
	// Two requests of 1,200 tokens each.
	for _, want := range []string{"› " + secretAsk, "Read(notes.txt)", "anthropic:" + sonnet + " · default · 2.4k tokens"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	// Ctrl+O unfolds the Read result (its second line, numbered) and
	// folds it again.
	unfolded := regexp.MustCompile(`(?m)^\s+2\s+The secret word is PAPAYA\.$`)
	s.SendKeys("C-o")
	s.WaitUntil("the tool result unfolded", screenWait, unfolded.MatchString)
	s.SendKeys("C-o")
	s.WaitUntil("the tool result folded again", screenWait, func(screen string) bool { return !unfolded.MatchString(screen) })
	// Ctrl+C twice quits, cleanly.
	s.SendKeys("C-c")
	s.WaitFor("Press Ctrl+C again to quit", screenWait)
	s.SendKeys("C-c")
	if status := s.WaitExit(screenWait); status != 0 {
		t.Errorf("cadre quit with status %d, want 0", status)
	}
}

// Two slow foreground subagents show as two live lines at once, and the
// main agent's answer comes after both.
func TestTUITwoSlowSubagentsBothVisible(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && c.has("ALPHA-TASK"):
			return testkit.Reply{Text: "alpha found", Wait: hold}
		case c.child() && c.has("BETA-TASK"):
			return testkit.Reply{Text: "beta found", Wait: hold}
		case c.child():
			return testkit.Reply{Text: "TEST: unexpected child request"}
		case !c.anyToolResult():
			return testkit.Reply{Text: "Two surveys at once.", ToolCalls: []testkit.ToolCall{
				fgAgentCall("Survey alpha", "ALPHA-TASK", "general-purpose"),
				fgAgentCall("Survey beta", "BETA-TASK", "general-purpose"),
			}}
		}
		var got []string
		for _, r := range c.results("Agent") {
			got = append(got, r.resultText())
		}
		all := strings.Join(got, " | ")
		if strings.Contains(all, "alpha found") && strings.Contains(all, "beta found") {
			return testkit.Reply{Text: "Both surveys are done: alpha and beta found."}
		}
		return testkit.Reply{Text: "TEST: the Agent results lack an answer: " + all}
	}))
	s := e.tui()
	ask(s, "Survey both")
	s.WaitUntil("both subagents running at once", screenWait, func(screen string) bool {
		return runsOn(screen, "Survey alpha") && runsOn(screen, "Survey beta") && strings.Contains(screen, "2 subagents")
	})
	close(hold)
	screen := s.WaitFor("Both surveys are done", screenWait)
	for _, desc := range []string{"Survey alpha", "Survey beta"} {
		if runsOn(screen, desc) {
			t.Errorf("the %s line still runs after the answer:\n%s", desc, screen)
		}
		if len(rowsWith(screen, desc)) == 0 {
			t.Errorf("the %s line is gone, want its summary:\n%s", desc, screen)
		}
	}
}

// Twenty subagents in parallel fit the screen: the input and the status
// line stay on it while they run, and the answer comes after.
func TestTUITwentySubagentsKeepTheInputOnScreen(t *testing.T) {
	const n = 20
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "found", Wait: hold}
		case !c.anyToolResult():
			var calls []testkit.ToolCall
			for i := 1; i <= n; i++ {
				calls = append(calls, fgAgentCall(fmt.Sprintf("Survey part %02d", i), fmt.Sprintf("PART-%02d", i), "general-purpose"))
			}
			return testkit.Reply{ToolCalls: calls}
		}
		if got := len(c.results("Agent")); got != n {
			return testkit.Reply{Text: fmt.Sprintf("TEST: %d Agent results, want %d", got, n)}
		}
		return testkit.Reply{Text: "All twenty parts are surveyed."}
	}))
	e.write(".cadre/settings.json", `{"subagents": {"maxForegroundConcurrent": 20}}`)
	// Above the default of 16, the project's fan-out is a widening: the
	// TUI asks once, before it takes the screen, with what trusting
	// enables (issue 22); the user trusts it.
	s := tmux.Start(e.t, tmux.Options{Dir: e.dir, Env: e.vars}, bin, "--model", sonnet)
	prompt := s.WaitFor("Trust this project", screenWait)
	if !strings.Contains(prompt, "subagents.maxForegroundConcurrent: 20") {
		t.Errorf("the trust question does not show what trusting enables:\n%s", prompt)
	}
	s.Type("y")
	s.SendKeys("Enter")
	s.WaitFor(inputHint, screenWait)
	if _, err := os.Stat(filepath.Join(e.home, "trust.json")); err != nil {
		t.Errorf("the TUI's yes was not recorded: %v", err)
	}
	ask(s, "Survey all parts")
	screen := s.WaitFor(fmt.Sprintf("%d subagents", n), screenWait)
	if !strings.Contains(screen, inputHint) {
		t.Errorf("the input left the screen while %d subagents run:\n%s", n, screen)
	}
	if !runsOn(screen, "Survey part 01") {
		t.Errorf("the first subagent's line is not shown:\n%s", screen)
	}
	// The lines that do not fit are summed up on one line.
	if shown := len(rowsWith(screen, "general-purpose Survey part")); shown < n && len(rowsWith(screen, "more subagents")) != 1 {
		t.Errorf("%d of %d subagent lines shown and no line sums up the rest:\n%s", shown, n, screen)
	}
	close(hold)
	screen = s.WaitFor("All twenty parts are surveyed.", screenWait)
	if !strings.Contains(screen, inputHint) {
		t.Errorf("the input left the screen:\n%s", screen)
	}
}

// A Bash call in the default mode asks; "y" allows it once and it runs.
func TestTUIApproveBashWithY(t *testing.T) {
	const command = "printf approved > bash-ran.txt"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if !c.anyToolResult() {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": command, "description": "Write the marker"}}}}
		}
		if r := c.results("Bash"); len(r) == 1 && !r[0].IsError {
			return testkit.Reply{Text: "The marker is written."}
		}
		return testkit.Reply{Text: "TEST: the Bash call failed: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "Write the marker")
	screen := s.WaitFor("wants to use Bash", screenWait)
	if !strings.Contains(screen, command) {
		t.Errorf("the prompt does not show the command:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "bash-ran.txt")); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	s.Type("y")
	s.WaitFor("The marker is written.", screenWait)
	got, err := os.ReadFile(filepath.Join(e.dir, "bash-ran.txt"))
	if err != nil || string(got) != "approved" {
		t.Errorf("bash-ran.txt = %q, %v; want the approved command's output", got, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
}

// A subagent's approval prompt reaches the TUI, names the subagent, and
// its answer lets the child's call run.
func TestTUIChildApproval(t *testing.T) {
	const command = "printf cleaned > child-ran.txt"
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": command, "description": "Clean up"}}}}
		case c.child():
			if r := c.results("Bash"); len(r) == 1 && !r[0].IsError {
				return testkit.Reply{Text: "Cleaned."}
			}
			return testkit.Reply{Text: "TEST: the child's Bash call failed: " + c.dump()}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{fgAgentCall("Tidy the project", "Clean up the project.", "general-purpose")}}
		}
		return testkit.Reply{Text: "The helper cleaned up."}
	}))
	s := e.tui()
	ask(s, "Tidy up")
	screen := s.WaitFor("wants to use Bash", screenWait)
	if rows := rowsWith(screen, "wants to use Bash"); len(rows) != 1 || !strings.Contains(rows[0], "general-purpose") {
		t.Errorf("the prompt does not name the subagent:\n%s", screen)
	}
	if !strings.Contains(screen, command) {
		t.Errorf("the prompt does not show the command:\n%s", screen)
	}
	s.Type("y")
	s.WaitFor("The helper cleaned up.", screenWait)
	got, err := os.ReadFile(filepath.Join(e.dir, "child-ran.txt"))
	if err != nil || string(got) != "cleaned" {
		t.Errorf("child-ran.txt = %q, %v; want the child's approved command's output", got, err)
	}
}

// "@reviewer text" runs the project's reviewer directly: the first request
// is the reviewer's, with its own system prompt, and its answer joins the
// conversation.
func TestTUIMentionRunsTheAgent(t *testing.T) {
	const mark = "REVIEWER-PROMPT-MARK"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case strings.Contains(c.system, mark):
			return testkit.Reply{Text: "Reviewer verdict: LGTM with nits."}
		case c.has("LGTM with nits"):
			return testkit.Reply{Text: "The reviewer approved it."}
		}
		return testkit.Reply{Text: "TEST: the main agent does not see the reviewer's answer: " + c.dump()}
	}))
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code for defects.\n---\nYou are "+mark+", a careful code reviewer.\n")
	s := e.tui()
	ask(s, "@reviewer check notes.txt")
	s.WaitFor("Reviewer verdict: LGTM with nits.", screenWait)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests after the @reviewer run, want 1 (no main-model round trip)", len(reqs))
	}
	first := bgDecode(reqs[0])
	if !strings.Contains(first.system, mark) {
		t.Errorf("the first request is not the reviewer's; system prompt:\n%s", first.system)
	}
	if !first.has("check notes.txt") {
		t.Errorf("the reviewer's request lacks the prompt:\n%s", first.dump())
	}
	ask(s, "What did the reviewer say?")
	s.WaitFor("The reviewer approved it.", screenWait)
}

// Ctrl+B moves a long foreground subagent to the background: the main
// agent carries on while the child's reply is still held, and the
// notification comes when it ends.
func TestTUICtrlBBackgroundsTheSubagent(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "survey result: 42 files", Wait: hold}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "The survey finished: 42 files."}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{fgAgentCall("Long survey", "Survey everything.", "general-purpose")}}
		}
		if r := c.results("Agent"); len(r) == 1 && strings.Contains(r[0].resultText(), "background") {
			return testkit.Reply{Text: "Carrying on while the survey runs."}
		}
		return testkit.Reply{Text: "TEST: unexpected Agent result: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "Survey the project")
	s.WaitUntil("the subagent running", screenWait, func(screen string) bool { return runsOn(screen, "Long survey") })
	s.SendKeys("C-b")
	// The child's reply is still held: only the move lets the main agent
	// answer.
	s.WaitFor("Carrying on while the survey runs.", screenWait)
	close(hold)
	s.WaitFor("The survey finished: 42 files.", screenWait)
}

// A prompt given without -p is the TUI's first message.
func TestTUIFirstMessageFromTheCommandLine(t *testing.T) {
	e, _ := anthropicEnv(t, readThenAnswer)
	s := tmux.Start(t, tmux.Options{Dir: e.dir, Env: e.vars}, bin, "--model", sonnet, secretAsk)
	screen := s.WaitFor(secretSays, screenWait)
	if !strings.Contains(screen, "› "+secretAsk) {
		t.Errorf("the first message is not shown as the user's:\n%s", screen)
	}
}

// "n" then a reason denies the call; the model reads the reason and the
// command does not run.
func TestTUIDenyWithAReason(t *testing.T) {
	const reason = "use the Makefile instead"
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if !c.anyToolResult() {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "printf x > denied.txt"}}}}
		}
		if r := c.results("Bash"); len(r) == 1 && r[0].IsError && strings.Contains(r[0].resultText(), reason) {
			return testkit.Reply{Text: "Understood: the Makefile it is."}
		}
		return testkit.Reply{Text: "TEST: the denial did not carry the reason: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "Build it")
	s.WaitFor("wants to use Bash", screenWait)
	s.Type("n")
	s.Type(reason)
	s.SendKeys("Enter")
	s.WaitFor("Understood: the Makefile it is.", screenWait)
	if _, err := os.Stat(filepath.Join(e.dir, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
}

// "a" allows the call and adds a rule for the session, so a like call
// later runs without asking.
func TestTUIAllowForTheSession(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch len(c.results("Bash")) {
		case 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch one.txt"}}}}
		case 1:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch two.txt"}}}}
		}
		return testkit.Reply{Text: "Both files are written."}
	}))
	s := e.tui()
	ask(s, "Write both files")
	screen := s.WaitFor("wants to use Bash", screenWait)
	if !strings.Contains(screen, "adds Bash(touch:*)") {
		t.Errorf("the prompt does not say which rule 'a' adds:\n%s", screen)
	}
	s.Type("a")
	// The second call, which no one answers, runs under the new rule.
	screen = s.WaitFor("Both files are written.", screenWait)
	if !strings.Contains(screen, "added the rule Bash(touch:*)") {
		t.Errorf("the transcript does not confirm the rule:\n%s", screen)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// interruptedTurn opens the TUI, asks what is never answered, and
// interrupts the turn with key; the model answers "Are you there?".
func interruptedTurn(t *testing.T, key string) *tmux.Session {
	t.Helper()
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.has("Are you there?") {
			return testkit.Reply{Text: "Here now."}
		}
		return testkit.Reply{Stall: testkit.StallNoResponse}
	}))
	s := e.tui()
	ask(s, "This is never answered")
	s.WaitFor("(esc stops)", screenWait)
	s.SendKeys(key)
	s.WaitUntil("the turn interrupted and nothing running", screenWait, func(screen string) bool {
		return strings.Contains(screen, "Interrupted.") && !strings.Contains(screen, "working")
	})
	return s
}

// Esc interrupts a turn whose reply never comes; the conversation goes on.
func TestTUIEscInterrupts(t *testing.T) {
	s := interruptedTurn(t, "Escape")
	ask(s, "Are you there?")
	s.WaitFor("Here now.", screenWait)
}

// A message typed while a turn runs is queued, shown as queued, and sent
// when the turn ends.
func TestTUIQueuedMessage(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.has("second question") {
			return testkit.Reply{Text: "Second answer."}
		}
		return testkit.Reply{Text: "First answer.", Wait: hold}
	}))
	s := e.tui()
	ask(s, "first question")
	s.WaitFor("(esc stops)", screenWait)
	ask(s, "second question")
	s.WaitFor("⏳ queued: second question", screenWait)
	close(hold)
	screen := s.WaitFor("Second answer.", screenWait)
	if strings.Contains(screen, "queued:") {
		t.Errorf("the sent message is still shown as queued:\n%s", screen)
	}
	if i, j := strings.Index(screen, "First answer."), strings.Index(screen, "› second question"); i < 0 || j < i {
		t.Errorf("the queued message was not sent after the first turn:\n%s", screen)
	}
}

// The session tree opens a running subagent's own session, live, and
// moves to its sibling and its parent with the keys it shows; Esc comes
// back to the conversation.
func TestTUISessionTree(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && c.has("ALPHA-TASK"):
			return testkit.Reply{Text: "alpha found", Wait: hold}
		case c.child():
			return testkit.Reply{Text: "beta found", Wait: hold}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				fgAgentCall("Survey alpha", "ALPHA-TASK", "general-purpose"),
				fgAgentCall("Survey beta", "BETA-TASK", "general-purpose"),
			}}
		}
		return testkit.Reply{Text: "Both surveys are done."}
	}))
	s := e.tui()
	ask(s, "Survey both")
	s.WaitUntil("both subagents running", screenWait, func(screen string) bool {
		return runsOn(screen, "Survey alpha") && runsOn(screen, "Survey beta")
	})
	s.SendKeys("C-t")
	// Ctrl+T opens the newest running subagent; which of the two that is
	// depends on which call started first.
	// The header comes first, the transcript as its watch reads it.
	screen := s.WaitUntil("a child's session with its prompt", screenWait, func(screen string) bool {
		return strings.Contains(screen, "Session tree · general-purpose · Survey ") &&
			(strings.Contains(screen, "› ALPHA-TASK") || strings.Contains(screen, "› BETA-TASK"))
	})
	first, other := "ALPHA-TASK", "BETA-TASK"
	if strings.Contains(screen, "Session tree · general-purpose · Survey beta") {
		first, other = other, first
	}
	for _, want := range []string{"› " + first, "running", "sibling", "p parent", "esc back"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the child's session screen lacks %q:\n%s", want, screen)
		}
	}
	s.SendKeys("]")
	s.WaitFor("› "+other, screenWait)
	s.SendKeys("p")
	screen = s.WaitFor("children (2)", screenWait)
	if !strings.Contains(screen, "Survey alpha") || !strings.Contains(screen, "Survey beta") {
		t.Errorf("the main session's screen does not list both children:\n%s", screen)
	}
	s.SendKeys("Escape")
	s.WaitFor(inputHint, screenWait)
	close(hold)
	s.WaitFor("Both surveys are done.", screenWait)
}

// Two children asking at once get one prompt each, in turn: the first
// says another waits, and both calls run once allowed.
func TestTUIParallelChildPromptsQueue(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			file := "left.txt"
			if c.has("RIGHT-TASK") {
				file = "right.txt"
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch " + file}}}}
		case c.child():
			return testkit.Reply{Text: "touched"}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				fgAgentCall("Touch left", "LEFT-TASK", "general-purpose"),
				fgAgentCall("Touch right", "RIGHT-TASK", "general-purpose"),
			}}
		}
		return testkit.Reply{Text: "Both sides are touched."}
	}))
	s := e.tui()
	ask(s, "Touch both sides")
	screen := s.WaitFor("(1 more waiting)", screenWait)
	first := "touch left.txt"
	if !strings.Contains(screen, "command: "+first) {
		first = "touch right.txt"
	}
	s.Type("y")
	// The prompt shown now is the other child's, and nothing else waits.
	s.WaitUntil("the second prompt", screenWait, func(screen string) bool {
		return strings.Contains(screen, "wants to use Bash") && !strings.Contains(screen, "command: "+first) && !strings.Contains(screen, "more waiting")
	})
	s.Type("y")
	s.WaitFor("Both sides are touched.", screenWait)
	for _, f := range []string{"left.txt", "right.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A child's prompt denied with Esc does not hang the child: it reads the
// denial and finishes, and so does the main agent.
func TestTUIChildDeniedCarriesOn(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch denied.txt"}}}}
		case c.child():
			if r := c.results("Bash"); len(r) == 1 && r[0].IsError && strings.Contains(r[0].resultText(), "denied") {
				return testkit.Reply{Text: "I was not allowed to touch it."}
			}
			return testkit.Reply{Text: "TEST: the child did not read a denial: " + c.dump()}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{fgAgentCall("Touch the file", "Touch denied.txt.", "general-purpose")}}
		}
		if r := c.results("Agent"); len(r) == 1 && strings.Contains(r[0].resultText(), "not allowed") {
			return testkit.Reply{Text: "The helper was refused, as you wished."}
		}
		return testkit.Reply{Text: "TEST: the Agent result lacks the child's answer: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "Touch the file")
	s.WaitFor("wants to use Bash", screenWait)
	s.SendKeys("Escape")
	s.WaitFor("The helper was refused, as you wished.", screenWait)
	if _, err := os.Stat(filepath.Join(e.dir, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
}

// --permission-mode shows on the status line, and Shift+Tab changes the
// mode the next calls run under, not just the line: in plan mode a Bash
// call is refused without a prompt.
func TestTUIPermissionModeCycle(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if !c.anyToolResult() {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch planned.txt"}}}}
		}
		if r := c.results("Bash"); len(r) == 1 && r[0].IsError && strings.Contains(r[0].resultText(), "plan") {
			return testkit.Reply{Text: "Plan mode refused the command."}
		}
		return testkit.Reply{Text: "TEST: the Bash call was not refused by plan mode: " + c.dump()}
	}))
	s := e.tui("--permission-mode", "acceptEdits")
	s.WaitFor(sonnet+" · acceptEdits ·", screenWait)
	s.SendKeys("BTab")
	s.WaitFor(sonnet+" · plan ·", screenWait)
	ask(s, "Touch the file")
	screen := s.WaitFor("Plan mode refused the command.", screenWait)
	if strings.Contains(screen, "wants to use Bash") {
		t.Errorf("plan mode asked instead of refusing:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "planned.txt")); err == nil {
		t.Error("the command ran in plan mode")
	}
}

// -c reopens the directory's latest session in the TUI with its
// transcript, and the next message continues it.
func TestTUIContinue(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.has("And again?") {
			if c.has("PAPAYA") {
				return testkit.Reply{Text: "Still PAPAYA."}
			}
			return testkit.Reply{Text: "TEST: the earlier turns are not in the request: " + c.dump()}
		}
		return readThenAnswer(c.req)
	}))
	ok(t, e.run("", "-p", secretAsk, "--model", sonnet))
	s := e.tui("-c")
	screen := s.WaitFor(secretSays, screenWait)
	if !strings.Contains(screen, "› "+secretAsk) {
		t.Errorf("the resumed transcript lacks the earlier message:\n%s", screen)
	}
	ask(s, "And again?")
	s.WaitFor("Still PAPAYA.", screenWait)
}

// A TUI that cannot start says why on the terminal, in one "cadre: …"
// line naming what is wrong, and exits 1.
func TestTUIStartFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
		args     []string
		want     []string
	}{
		{name: "unknown provider", args: []string{"--model", "nosuch:model"}, want: []string{"cadre: ", `unknown provider "nosuch"`}},
		{name: "bad settings", settings: "{bad json", args: []string{"--model", sonnet}, want: []string{"cadre: ", ".cadre/settings.json:1:2: invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, readThenAnswer)
			if tc.settings != "" {
				e.write(".cadre/settings.json", tc.settings)
			}
			s := tmux.Start(t, tmux.Options{Dir: e.dir, Env: e.vars}, append([]string{bin}, tc.args...)...)
			if status := s.WaitExit(screenWait); status != 1 {
				t.Errorf("exit status %d, want 1", status)
			}
			// The message may wrap at the terminal's width.
			screen := strings.ReplaceAll(s.Capture(), "\n", "")
			for _, w := range tc.want {
				if !strings.Contains(screen, w) {
					t.Errorf("the screen lacks %q:\n%s", w, s.Capture())
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests from a TUI that did not start", n)
			}
		})
	}
}

// A child whose run times out while its prompt is open takes the prompt
// away with it: the screen goes back to the input, the command never runs,
// and the main agent gets the child's end and answers.
func TestTUITimedOutChildWithdrawsItsPrompt(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch late.txt"}}}}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{fgAgentCall("Touch late", "Touch late.txt.", "general-purpose")}}
		}
		if r := c.results("Agent"); len(r) == 1 && r[0].IsError {
			return testkit.Reply{Text: "The helper ran out of time."}
		}
		return testkit.Reply{Text: "TEST: the Agent result is not an error: " + c.dump()}
	}))
	// The run's own limit ends the child while nobody answers.
	e.write(".cadre/settings.json", `{"subagents": {"runTimeoutSeconds": 1}}`)
	s := e.tui()
	ask(s, "Touch it late")
	s.WaitFor("wants to use Bash", screenWait)
	screen := s.WaitFor("The helper ran out of time.", screenWait)
	if strings.Contains(screen, "wants to use Bash") || !strings.Contains(screen, inputHint) {
		t.Errorf("the withdrawn prompt is still shown:\n%s", screen)
	}
	if rows := rowsWith(screen, "Touch late —"); len(rows) != 1 || !strings.Contains(rows[0], "✗") || !strings.Contains(rows[0], "timeout") {
		t.Errorf("the child's line does not say it timed out: %q", rows)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "late.txt")); err == nil {
		t.Error("the unanswered command ran")
	}
}

// The status line's tokens and cost follow the running subagents, before
// the turn ends.
func TestTUIStatusLineFollowsRunningSubagents(t *testing.T) {
	hold := make(chan struct{}) // the fake server drops held requests when the test ends
	used := llm.Usage{InputTokens: 1000, OutputTokens: 200}
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{Usage: used, ToolCalls: globCall()}
		case c.child():
			return testkit.Reply{Text: "found", Wait: hold}
		case !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				fgAgentCall("Count alpha", "ALPHA-TASK", "general-purpose"),
				fgAgentCall("Count beta", "BETA-TASK", "general-purpose"),
			}}
		}
		return testkit.Reply{Text: "Counted."}
	}))
	s := e.tui()
	ask(s, "Count both")
	// Each child's first reply used 1,200 tokens; both are still running.
	s.WaitUntil("the children's tokens on the status line while they run", screenWait, func(screen string) bool {
		// The status line is the last row naming the model (the welcome
		// line names it too).
		rows := rowsWith(screen, "anthropic:"+sonnet)
		return len(rows) == 2 && strings.Contains(rows[1], "· 2.4k tokens · $") && strings.Contains(rows[1], "2 subagents")
	})
	close(hold)
	s.WaitFor("Counted.", screenWait)
}

// An unpriced model's cost is "?" on the status line, never $0.0000.
func TestTUIUnpricedModelCostIsAQuestionMark(t *testing.T) {
	e, _ := anthropicEnv(t, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "UNPRICED-ANSWER", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 200}}
	})
	s := e.tui("--model", unpriced)
	ask(s, "hello")
	screen := s.WaitUntil("the answer, and the turn over", screenWait, func(screen string) bool {
		return strings.Contains(screen, "UNPRICED-ANSWER") && !strings.Contains(screen, "working")
	})
	if want := "anthropic:" + unpriced + " · default · 1.2k tokens · ?"; !strings.Contains(screen, want) {
		t.Errorf("status line lacks %q:\n%s", want, screen)
	}
	if strings.Contains(screen, "$0.0000") {
		t.Errorf("an unpriced model's cost shows as $0:\n%s", screen)
	}
	s.SendKeys("C-c")
	s.WaitFor("Press Ctrl+C again to quit", screenWait)
	s.SendKeys("C-c")
	s.WaitExit(screenWait)
}
