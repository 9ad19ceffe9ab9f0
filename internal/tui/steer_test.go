package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

func taskStarted(call, id, agent, desc string, depth int, bg bool) cadre.Event {
	return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, Task: &cadre.TaskEvent{
		TaskID: id, ToolUseID: call, Description: desc, AgentType: agent, SpawnDepth: depth, Background: bg, Kind: cadre.TaskLocalAgent,
	}}
}

func taskEnded(call string, status cadre.TaskStatus, tokens int64, uses int) cadre.Event {
	return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskNotification, Task: &cadre.TaskEvent{
		ToolUseID: call, Status: status, Usage: &cadre.TaskUsage{TotalTokens: tokens, ToolUses: uses},
	}}
}

// TestSubagentsScreen: each run is a line under the Agent call that
// started it (a grandchild indented under its parent), live with its
// current tool, elapsed time and tokens; a finished run is one summary
// line.
func TestSubagentsScreen(t *testing.T) {
	h := newHarness(t)
	h.typeText("Review it")
	h.press(tea.KeyEnter, 0)
	h.event(assistant("", 10, llm.Text("Two reviewers at once."),
		toolUse("c1", "Agent", map[string]any{"subagent_type": "reviewer", "description": "Review stock.go"}),
		toolUse("c2", "Agent", map[string]any{"subagent_type": "test-finder", "description": "Find tests"}),
	))
	h.event(taskStarted("c1", "a1", "reviewer", "Review stock.go", 1, false))
	h.event(taskStarted("c2", "a2", "test-finder", "Find tests", 1, false))
	h.event(assistant("c1", 1200, toolUse("r1", "Read", map[string]any{"file_path": "inventory/stock.go"}), toolUse("g1", "Agent", map[string]any{"description": "Check locks"})))
	h.event(taskStarted("g1", "a3", "explorer", "Check locks", 2, false))
	h.event(assistant("g1", 300, toolUse("x1", "Grep", map[string]any{"pattern": "Mutex"})))
	h.now = t0.Add(2 * time.Second)
	h.event(assistant("c2", 800, llm.Text("none found")))
	h.event(taskEnded("c2", cadre.TaskCompleted, 2400, 2))
	h.now = t0.Add(5 * time.Second)
	h.update(tickMsg{})
	h.golden("subagents")
}

// TestManySubagentsStayReadable: twenty runs in parallel take the free
// rows, running ones first; what does not fit is summed up on one line,
// the runs that ended before the others.
func TestManySubagentsStayReadable(t *testing.T) {
	h := newHarness(t) // 80×20: 15 run lines fit
	var calls []llm.Block
	for i := range 20 {
		calls = append(calls, toolUse(fmt.Sprintf("c%d", i), "Agent", map[string]any{"description": fmt.Sprintf("part %d", i)}))
	}
	h.event(assistant("", 10, calls...))
	// Runs wait for a concurrency slot: five have not started yet.
	for i := range 15 {
		h.event(taskStarted(fmt.Sprintf("c%d", i), fmt.Sprintf("a%d", i), "worker", fmt.Sprintf("part %d", i), 1, false))
	}
	h.event(taskEnded("c0", cadre.TaskCompleted, 10, 1))
	screen := h.m.Screen()
	for i := 1; i < 15; i++ {
		if !strings.Contains(screen, fmt.Sprintf("worker part %d — thinking", i)) {
			t.Errorf("running part %d is not shown:\n%s", i, screen)
		}
	}
	if strings.Contains(screen, "worker part 0 ") {
		t.Errorf("the finished run is shown while running ones are summed up:\n%s", screen)
	}
	if !strings.Contains(screen, "… 5 more subagents (0 running, 4 starting, 1 done)") {
		t.Errorf("the runs past the free rows are not summed up:\n%s", screen)
	}
	if !strings.Contains(screen, "14 subagents") {
		t.Errorf("the status line does not count the running subagents:\n%s", screen)
	}

	// In a tall terminal every line shows; once all ended, the group
	// folds to maxRunLines again.
	h.update(tea.WindowSizeMsg{Width: 80, Height: 45})
	screen = h.m.Screen()
	if strings.Contains(screen, "more subagents") || !strings.Contains(screen, "✓ worker part 0") {
		t.Errorf("a tall terminal sums up runs that would fit:\n%s", screen)
	}
	for i := 1; i < 20; i++ {
		h.event(taskStarted(fmt.Sprintf("c%d", i), fmt.Sprintf("a%d", i), "worker", fmt.Sprintf("part %d", i), 1, false))
		h.event(taskEnded(fmt.Sprintf("c%d", i), cadre.TaskCompleted, 10, 1))
	}
	if n := strings.Count(h.m.Screen(), "✓ worker"); n != maxRunLines {
		t.Errorf("%d finished lines shown, want %d:\n%s", n, maxRunLines, h.m.Screen())
	}
}

// asker puts one request in an Approvals queue from a goroutine and
// returns the decision it gets.
func ask(t *testing.T, a *cadre.Approvals, req cadre.PermissionRequest) <-chan cadre.PermissionDecision {
	out := make(chan cadre.PermissionDecision, 1)
	go func() {
		d, err := a.Ask(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		out <- d
	}()
	return out
}

// pending waits for n requests and hands them to the model, as Run's
// pump does.
func (h *harness) pending(n int) {
	h.t.Helper()
	a := h.m.cfg.Approvals
	for {
		ch := a.Changed()
		if p := a.Pending(); len(p) == n {
			h.update(ApprovalsMsg{p})
			return
		}
		select {
		case <-ch:
		case <-h.t.Context().Done():
			h.t.Fatal("test ended waiting for requests")
		}
	}
}

func bashRequest(agent, cmd string) cadre.PermissionRequest {
	input, _ := json.Marshal(map[string]string{"command": cmd, "description": "Clean the build"})
	r := cadre.PermissionRequest{Tool: "Bash", Input: input, Agent: agent, Target: cmd, Suggestions: []string{"Bash(rm:*)"}}
	if agent != "main" {
		r.AgentID, r.ParentToolUseID = "a1", "c1"
	}
	return r
}

func TestApprovalScreen(t *testing.T) {
	h := newHarness(t)
	a := h.m.cfg.Approvals
	first := ask(t, a, bashRequest("reviewer", "rm -rf build"))
	h.pending(1)
	second := ask(t, a, bashRequest("main", "rm -rf dist"))
	h.pending(2)
	h.golden("approval")
	h.typeText("a")
	if d := <-first; !d.Allow || !slices.Equal(d.Remember, []string{"Bash(rm:*)"}) {
		t.Fatalf("a: %+v, want allowed with the suggested rule remembered", d)
	}
	h.pending(1)
	if !strings.Contains(h.m.Screen(), "added the rule Bash(rm:*)") {
		t.Errorf("allowing for the session does not say which rule it adds:\n%s", h.m.Screen())
	}
	if !strings.Contains(h.m.Screen(), "Permission: main agent wants to use Bash") {
		t.Fatalf("the queued request is not shown next:\n%s", h.m.Screen())
	}
	h.typeText("n")
	h.typeText("use make clean")
	h.press(tea.KeyEnter, 0)
	if d := <-second; d.Allow || !strings.Contains(d.Message, "use make clean") {
		t.Fatalf("n + reason: %+v, want a denial carrying the reason", d)
	}
}

func TestApprovalKeys(t *testing.T) {
	for _, tc := range []struct {
		keys  []tea.KeyPressMsg
		allow bool
		rules int
	}{
		{keys: []tea.KeyPressMsg{{Code: 'y', Text: "y"}}, allow: true},
		{keys: []tea.KeyPressMsg{{Code: '1', Text: "1"}}, allow: true},
		{keys: []tea.KeyPressMsg{{Code: '2', Text: "2"}}, allow: true, rules: 1},
		{keys: []tea.KeyPressMsg{{Code: '3', Text: "3"}, {Code: tea.KeyEnter}}},
		{keys: []tea.KeyPressMsg{{Code: tea.KeyEscape}}},
	} {
		h := newHarness(t)
		got := ask(t, h.m.cfg.Approvals, bashRequest("main", "ls"))
		h.pending(1)
		for _, k := range tc.keys {
			h.update(k)
		}
		d := <-got
		if d.Allow != tc.allow || len(d.Remember) != tc.rules {
			t.Errorf("keys %v: %+v, want allow %v with %d rules", tc.keys, d, tc.allow, tc.rules)
		}
		if !d.Allow && d.Message == "" {
			t.Errorf("keys %v: a denial tells the model nothing", tc.keys)
		}
	}
}

// A request whose caller gave up leaves the screen.
func TestApprovalWithdrawn(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.m.cfg.Approvals.Ask(ctx, bashRequest("main", "ls"))
	}()
	h.pending(1)
	cancel()
	<-done
	h.pending(0)
	if strings.Contains(h.m.Screen(), "Permission:") {
		t.Fatalf("a withdrawn request is still shown:\n%s", h.m.Screen())
	}
}

func TestSteeringKeys(t *testing.T) {
	h := newHarness(t, "explorer", "reviewer")
	// Shift+Tab cycles the modes, starting from the conversation's.
	for _, want := range []cadre.PermissionMode{"acceptEdits", "plan", "default"} {
		h.press(tea.KeyTab, tea.ModShift)
		if got := h.conv.modes[len(h.conv.modes)-1]; got != want {
			t.Fatalf("shift+tab set %q, want %q", got, want)
		}
	}
	// Esc interrupts a running turn.
	h.typeText("go")
	h.press(tea.KeyEnter, 0)
	h.press(tea.KeyEscape, 0)
	if h.conv.interrupts != 1 {
		t.Fatalf("esc during a turn: %d interrupts", h.conv.interrupts)
	}
	// Ctrl+B moves the foreground subagents.
	h.event(assistant("", 1, toolUse("c1", "Agent", map[string]any{})))
	h.event(taskStarted("c1", "a1", "explorer", "Look", 1, false))
	h.conv.moved = true
	h.press('b', tea.ModCtrl)
	if !slices.Equal(h.conv.backgrounds, []string{""}) || !strings.Contains(h.m.Screen(), "Moved the running subagents") {
		t.Fatalf("ctrl+b: backgrounds %q:\n%s", h.conv.backgrounds, h.m.Screen())
	}
	h.event(result())
	// @ completes agent names; @name text runs that agent.
	h.typeText("@rev")
	if !slices.Equal(h.m.completion, []string{"reviewer"}) {
		t.Fatalf("@rev offers %q", h.m.completion)
	}
	h.press(tea.KeyTab, 0)
	h.typeText("check main.go")
	h.press(tea.KeyEnter, 0)
	if !slices.Equal(h.conv.agents, [][2]string{{"reviewer", "check main.go"}}) {
		t.Fatalf("@reviewer ran %q", h.conv.agents)
	}
	h.typeText("@nobody hi")
	h.press(tea.KeyEnter, 0)
	if !strings.Contains(h.m.Screen(), `no agent or file named "nobody"`) {
		t.Fatalf("@ an unknown agent says nothing:\n%s", h.m.Screen())
	}
	// Up brings back the history, Down the draft.
	h.typeText("draft")
	h.press(tea.KeyUp, 0)
	if v := h.m.input.Value(); v != "@nobody hi" {
		t.Fatalf("up: %q, want the last line sent", v)
	}
	h.press(tea.KeyUp, 0)
	h.press(tea.KeyDown, 0)
	h.press(tea.KeyDown, 0)
	if v := h.m.input.Value(); v != "draft" {
		t.Fatalf("down past the newest: %q, want the draft back", v)
	}
	// Ctrl+J adds a line; Enter sends both.
	h.m.input.Reset()
	h.typeText("one")
	h.press('j', tea.ModCtrl)
	h.typeText("two")
	h.press(tea.KeyEnter, 0)
	if last := h.conv.sent[len(h.conv.sent)-1]; last != "one\ntwo" {
		t.Fatalf("sent %q, want two lines", last)
	}
	// Ctrl+C once warns, twice quits (with the turn over: while it runs,
	// Ctrl+C interrupts it); each result starts the next message queued.
	for h.m.busy {
		h.event(result())
	}
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("the first ctrl+c quit")
	}
	if !strings.Contains(h.m.Screen(), "Press Ctrl+C again to quit") {
		t.Fatalf("no hint after the first ctrl+c:\n%s", h.m.Screen())
	}
	if cmd := h.press('c', tea.ModCtrl); cmd == nil || !isQuit(cmd) {
		t.Fatal("the second ctrl+c did not quit")
	}
}

// isQuit reports whether cmd (possibly a batch) quits.
func isQuit(cmd tea.Cmd) bool {
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && isQuit(c) {
				return true
			}
		}
	}
	return false
}

// An "@name" run has no Agent call of the main agent: its line shows
// anyway, and the turn's result (the agent's answer) follows it.
func TestDirectRunShown(t *testing.T) {
	h := newHarness(t, "reviewer")
	h.typeText("@reviewer look at main.go")
	h.press(tea.KeyEnter, 0)
	h.event(taskStarted("direct_1", "a1", "reviewer", "look at main.go", 1, false))
	h.event(assistant("direct_1", 50, toolUse("r1", "Read", map[string]any{"file_path": "main.go"})))
	if !strings.Contains(h.m.Screen(), "reviewer look at main.go — Read(main.go)") {
		t.Fatalf("the direct run's line is missing:\n%s", h.m.Screen())
	}
	h.event(taskEnded("direct_1", cadre.TaskCompleted, 50, 1))
	h.event(cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultSuccess, Result: &cadre.ResultInfo{Result: "main.go looks fine"}})
	if s := h.m.Screen(); !strings.Contains(s, "✓ reviewer look at main.go — done") || !strings.Contains(s, "main.go looks fine") {
		t.Fatalf("the direct run's summary or answer is missing:\n%s", s)
	}
}

// Ctrl+O unfolds the tool results, and folds them again.
func TestExpandResults(t *testing.T) {
	h := newHarness(t)
	h.event(assistant("", 1, toolUse("t1", "Bash", map[string]any{"command": "ls"})))
	h.event(toolResult("t1", "a.go\nb.go\nc.go", false))
	if s := h.m.Screen(); !strings.Contains(s, "⎿ a.go (+2 lines") || strings.Contains(s, "c.go") {
		t.Fatalf("the result is not folded:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	if s := h.m.Screen(); strings.Contains(s, "(+2 lines") || !strings.Contains(s, "    c.go") {
		t.Fatalf("ctrl+o did not unfold the result:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	if s := h.m.Screen(); strings.Contains(s, "c.go") {
		t.Fatalf("a second ctrl+o did not fold it again:\n%s", s)
	}
}

// A subagent's prompt says which run asks: its description and depth.
func TestApprovalNamesTheRun(t *testing.T) {
	h := newHarness(t)
	h.event(assistant("", 1, toolUse("c1", "Agent", map[string]any{})))
	h.event(taskStarted("c1", "a1", "reviewer", "Review stock.go", 1, false))
	h.event(assistant("c1", 1, toolUse("g1", "Agent", map[string]any{})))
	h.event(taskStarted("g1", "a2", "cleaner", "Clean the build", 2, false))
	req := bashRequest("cleaner", "rm -rf build")
	req.ParentToolUseID = "g1"
	got := ask(t, h.m.cfg.Approvals, req)
	h.pending(1)
	if s := h.m.Screen(); !strings.Contains(s, "Permission: subagent cleaner wants to use Bash (Clean the build, depth 2)") {
		t.Fatalf("the prompt does not name the run:\n%s", s)
	}
	h.press(tea.KeyEscape, 0)
	<-got
}

// Ctrl+C twice quits even with prompts queued: the first denies the one
// shown, the second quits.
func TestCtrlCTwiceQuitsOverPrompts(t *testing.T) {
	h := newHarness(t)
	a := h.m.cfg.Approvals
	first := ask(t, a, bashRequest("main", "ls"))
	h.pending(1)
	second := ask(t, a, bashRequest("main", "pwd"))
	h.pending(2)
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("the first ctrl+c quit")
	}
	if d := <-first; d.Allow {
		t.Fatalf("the first ctrl+c allowed the prompt shown: %+v", d)
	}
	h.pending(1)
	if cmd := h.press('c', tea.ModCtrl); cmd == nil || !isQuit(cmd) {
		t.Fatal("the second ctrl+c did not quit while a prompt waited")
	}
	a.Answer(a.Pending()[0].ID, cadre.PermissionDecision{}) // the conversation's stop would
	<-second
}

// Background runs whose lines have scrolled out of view stay in a panel
// above the input while they run; the panel goes when they end.
func TestBackgroundPanel(t *testing.T) {
	h := newHarness(t)
	for i := range 5 {
		call := fmt.Sprintf("b%d", i)
		h.event(assistant("", 1, toolUse(call, "Agent", map[string]any{"run_in_background": true})))
		h.event(taskStarted(call, "a"+call, "watcher", fmt.Sprintf("watch %d", i), 1, true))
	}
	if _, bottom, _ := strings.Cut(h.m.Screen(), "────────"); strings.Contains(bottom, "watcher") {
		t.Fatalf("the panel repeats runs whose lines are in view:\n%s", h.m.Screen())
	}
	for i := range 40 {
		h.m.Info(fmt.Sprintf("filler line %d", i))
	}
	s := h.m.Screen()
	_, bottom, _ := strings.Cut(s, "────────")
	if !strings.Contains(bottom, "watcher watch 0 — background") || !strings.Contains(bottom, "… 2 more running in the background") {
		t.Fatalf("no background panel under the transcript:\n%s", s)
	}
	for i := range 5 {
		h.event(taskEnded(fmt.Sprintf("b%d", i), cadre.TaskCompleted, 1, 1))
	}
	if _, bottom, _ = strings.Cut(h.m.Screen(), "────────"); strings.Contains(bottom, "watcher") {
		t.Fatalf("the panel stayed after the runs ended:\n%s", h.m.Screen())
	}
}

// Text from outside never drives the terminal: escape sequences in the
// model's answer, a tool's result, a subagent's description or a
// permission request's input are not drawn.
func TestEscapeSequencesAreNotDrawn(t *testing.T) {
	h := newHarness(t)
	const clear, title, c1 = "\x1b[2J", "\x1b]0;pwned\x07", "\u009b31m"
	h.event(partial("hello " + clear + "world"))
	h.event(assistant("", 1, llm.Text("hello "+clear+"world"), toolUse("t1", "Bash", map[string]any{"command": "ls" + title})))
	h.event(toolResult("t1", "out"+c1+"put", false))
	h.event(assistant("", 1, toolUse("c1", "Agent", map[string]any{})))
	h.event(taskStarted("c1", "a1", "rev"+clear, "desc"+title, 1, false))
	req := bashRequest("main", "rm"+clear)
	req.Reason = "why" + title
	got := ask(t, h.m.cfg.Approvals, req)
	h.pending(1)
	content := h.m.View().Content
	for _, bad := range []string{clear, title, "\x1b]0;", c1, "\x07"} {
		if strings.Contains(content, bad) {
			t.Errorf("the screen carries %q from outside", bad)
		}
	}
	s := h.m.Screen()
	for _, want := range []string{"hello world", "Bash(ls)", "⎿ out", "rev desc", "command: rm"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	h.press(tea.KeyEscape, 0)
	<-got
}

// While the reply streams a thinking block, the status line says so.
func TestThinkingShown(t *testing.T) {
	h := newHarness(t)
	h.typeText("hard question")
	h.press(tea.KeyEnter, 0)
	h.event(cadre.Event{Type: cadre.EventStreamEvent, Partial: map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking"}}})
	if !strings.Contains(h.m.Screen(), "thinking (esc stops)") {
		t.Fatalf("no thinking state:\n%s", h.m.Screen())
	}
	h.event(cadre.Event{Type: cadre.EventStreamEvent, Partial: map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "text"}}})
	h.event(partial("Answer"))
	if s := h.m.Screen(); strings.Contains(s, "thinking") || !strings.Contains(s, "working") {
		t.Fatalf("still thinking once the text streams:\n%s", s)
	}
}
