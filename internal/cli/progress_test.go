package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// clock is a fake clock safe for the two goroutines of the race test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// agentTag is who an event belongs to: the main agent (zero value) or a
// subagent run.
type agentTag struct{ parent, agentType, desc string }

var (
	mainAgent = agentTag{}
	reviewer  = agentTag{"toolu_A1", "reviewer", "review the diff"}
	explorer  = agentTag{"toolu_A2", "explorer", "find stock callers"}
	tester    = agentTag{"toolu_R2", "general-purpose", "check the tests"}
	bgAgent   = agentTag{"toolu_B1", "indexer", "index the repo"}
	gp1       = agentTag{"toolu_G1", "general-purpose", "first look"}
	gp2       = agentTag{"toolu_G2", "general-purpose", "second look"}
	gp3       = agentTag{"toolu_G3", "general-purpose", "third look"}
)

func tagged(a agentTag, sec int, typ cadre.EventType, blocks ...llm.Block) cadre.Event {
	role := llm.RoleUser
	if typ == cadre.EventAssistant {
		role = llm.RoleAssistant
	}
	e := cadre.Event{
		Type: typ, SessionID: "main", Time: t0.Add(time.Duration(sec) * time.Second),
		ParentToolUseID: a.parent, AgentType: a.agentType, TaskDescription: a.desc,
		Message: &llm.Message{Role: role, Content: blocks},
	}
	if a.parent != "" {
		e.AgentID = "child-" + a.parent
	}
	return e
}

func prompt(a agentTag, sec int) cadre.Event {
	return tagged(a, sec, cadre.EventUser, llm.Text("please "+a.desc))
}

func say(a agentTag, sec int, tokens int64, blocks ...llm.Block) cadre.Event {
	e := tagged(a, sec, cadre.EventAssistant, blocks...)
	e.Assistant = &cadre.AssistantInfo{Usage: llm.Usage{
		InputTokens: tokens / 2, OutputTokens: tokens / 4, CacheReadInputTokens: tokens - tokens/2 - tokens/4,
	}}
	return e
}

func results(a agentTag, sec int, blocks ...llm.Block) cadre.Event {
	return tagged(a, sec, cadre.EventUser, blocks...)
}

func call(id, name string, input map[string]any) llm.Block {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return llm.ToolUse(id, name, b)
}

func agentCall(a agentTag) llm.Block {
	return call(a.parent, "Agent", map[string]any{"description": a.desc, "subagent_type": a.agentType, "prompt": "please " + a.desc})
}

func mainResult(sec int) cadre.Event {
	return cadre.Event{Type: cadre.EventResult, SessionID: "main", Time: t0.Add(time.Duration(sec) * time.Second), Result: &cadre.ResultInfo{}}
}

// scenario is a run with two parallel subagents, one of which starts a
// nested subagent while the other fails.
func scenario() []cadre.Event {
	return []cadre.Event{
		{Type: cadre.EventSystem, Subtype: "init", SessionID: "main", Time: t0, Init: &cadre.InitInfo{}},
		prompt(mainAgent, 0),
		say(mainAgent, 0, 900, llm.Text("I'll split this up."), agentCall(reviewer), agentCall(explorer)),
		prompt(reviewer, 1),
		prompt(explorer, 1),
		say(reviewer, 3, 1500, call("toolu_r1", "Read", map[string]any{"file_path": "/home/dev/projects/warehouse/internal/inventory/stock_levels.go"})),
		say(explorer, 4, 2200,
			call("toolu_e1", "Grep", map[string]any{"pattern": "StockLevel", "path": "/home/dev/projects/warehouse"}),
			call("toolu_e2", "Glob", map[string]any{"pattern": "**/*_test.go"})),
		results(reviewer, 5, llm.ToolResult("toolu_r1", "package inventory", false)),
		say(reviewer, 6, 1900, llm.Text("Let me get the tests checked."), agentCall(tester)),
		prompt(tester, 7),
		say(tester, 8, 1200, call("toolu_t1", "Bash", map[string]any{"command": "go test ./internal/inventory/... -run TestStock -count=1 -race -v"})),
		results(explorer, 9, llm.ToolResult("toolu_e1", "stock.go:12", false), llm.ToolResult("toolu_e2", "stock_test.go", false)),
		say(explorer, 10, 2600, llm.Text("Searching once more.")),
		results(mainAgent, 12, llm.ToolResult(explorer.parent, "model overloaded (529)\nretries exhausted", true)),
		results(tester, 13, llm.ToolResult("toolu_t1", "ok", false)),
		say(tester, 15, 1300, llm.Text("All tests pass.")),
		results(reviewer, 15, llm.ToolResult(tester.parent, "All tests pass.", false)),
		say(reviewer, 16, 2100, llm.Text("The diff looks right.")),
		results(mainAgent, 17, llm.ToolResult(reviewer.parent, "The diff looks right.", false)),
		say(mainAgent, 18, 1000, llm.Text("Done: the diff is fine.")),
		mainResult(18),
	}
}

func plainOutput(events []cadre.Event) string {
	var buf bytes.Buffer
	c := &clock{t: t0}
	p := newProgress(&buf, false, c.now)
	for _, e := range events {
		p.Event(e)
		p.Tick()
	}
	p.Close()
	return buf.String()
}

func TestProgressPlainGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "progress-plain.golden"), []byte(plainOutput(scenario())))
}

func TestProgressPlain(t *testing.T) {
	tests := []struct {
		name   string
		events []cadre.Event
		want   string
	}{
		{
			name: "the main agent's own messages print nothing",
			events: []cadre.Event{
				prompt(mainAgent, 0),
				say(mainAgent, 1, 500, call("toolu_m1", "Read", map[string]any{"file_path": "main.go"})),
				results(mainAgent, 2, llm.ToolResult("toolu_m1", "package main", false)),
				mainResult(3),
			},
		},
		{
			name: "a background run outlives its launch result and ends with its notification",
			events: []cadre.Event{
				say(mainAgent, 0, 100, call(bgAgent.parent, "Agent", map[string]any{"description": bgAgent.desc, "prompt": "go", "run_in_background": true})),
				results(mainAgent, 0, llm.ToolResult(bgAgent.parent, "Async agent launched", false)),
				prompt(bgAgent, 1),
				say(bgAgent, 5, 4000, call("toolu_b1", "Read", map[string]any{"file_path": "README.md"})),
				{Type: cadre.EventSystem, Subtype: "task_notification", SessionID: "main", Time: t0.Add(65 * time.Second),
					Task: &cadre.TaskEvent{TaskID: "child", ToolUseID: bgAgent.parent, Status: cadre.TaskCompleted, Summary: "indexed"}},
			},
			want: "[indexer] started: index the repo\n" +
				"[indexer] Read README.md\n" +
				"[indexer] done in 1m04s, 4.0k tokens, 1 tool use\n",
		},
		{
			name: "a failed background run",
			events: []cadre.Event{
				say(mainAgent, 0, 100, call(bgAgent.parent, "Agent", map[string]any{"description": bgAgent.desc, "prompt": "go", "run_in_background": true})),
				prompt(bgAgent, 1),
				results(mainAgent, 1, llm.ToolResult(bgAgent.parent, "Async agent launched", false)),
				{Type: cadre.EventSystem, Subtype: "task_notification", SessionID: "main", Time: t0.Add(3 * time.Second),
					Task: &cadre.TaskEvent{ToolUseID: bgAgent.parent, Status: cadre.TaskKilled}},
			},
			want: "[indexer] started: index the repo\n" +
				"[indexer] failed after 2s, 0 tokens, 0 tool uses: killed\n",
		},
		{
			name: "runs of one type are numbered in the order of their calls, whatever order they start in",
			events: []cadre.Event{
				say(mainAgent, 0, 100, agentCall(gp1), agentCall(gp2), agentCall(gp3)),
				prompt(gp3, 1),
				prompt(gp1, 1),
				prompt(gp2, 2),
				results(mainAgent, 3, llm.ToolResult(gp2.parent, "ok", false)),
				results(mainAgent, 4, llm.ToolResult(gp1.parent, "ok", false), llm.ToolResult(gp3.parent, "ok", false)),
			},
			want: "[general-purpose #3] started: third look\n" +
				"[general-purpose] started: first look\n" +
				"[general-purpose #2] started: second look\n" +
				"[general-purpose #2] done in 1s, 0 tokens, 0 tool uses\n" +
				"[general-purpose] done in 3s, 0 tokens, 0 tool uses\n" +
				"[general-purpose #3] done in 3s, 0 tokens, 0 tool uses\n",
		},
		{
			name: "late events of a finished run do not start it again",
			events: []cadre.Event{
				prompt(reviewer, 0),
				results(mainAgent, 2, llm.ToolResult(reviewer.parent, "ok", false)),
				say(reviewer, 3, 10, llm.Text("straggler")),
			},
			want: "[reviewer] started: review the diff\n" +
				"[reviewer] done in 2s, 0 tokens, 0 tool uses\n",
		},
		{
			name: "control characters cannot reach the terminal",
			events: []cadre.Event{
				prompt(agentTag{"toolu_X", "evil\x1b[2J", "line one\nline two\x07"}, 0),
				say(agentTag{"toolu_X", "evil", ""}, 1, 10, call("toolu_x1", "Bash", map[string]any{"command": "echo \x1b]0;title\x07 hi"})),
				results(mainAgent, 2, llm.ToolResult("toolu_X", "boom\x1b[31m red", true)),
			},
			want: "[evil [2J] started: line one line two\n" +
				"[evil [2J] Bash echo ]0;title hi\n" +
				"[evil [2J] failed after 2s, 10 tokens, 1 tool use: boom [31m red\n",
		},
		{
			name: "a run without type or description, and a tool without a hint",
			events: []cadre.Event{
				tagged(agentTag{parent: "toolu_Y"}, 0, cadre.EventUser, llm.Text("hi")),
				say(agentTag{parent: "toolu_Y"}, 1, 1_250_000, call("toolu_y1", "TodoWrite", map[string]any{"todos": []any{}})),
				results(mainAgent, 3725, llm.ToolResult("toolu_Y", "ok", false)),
			},
			want: "[agent] started\n" +
				"[agent] TodoWrite\n" +
				"[agent] done in 1h02m, 1.2M tokens, 1 tool use\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plainOutput(tc.events)); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// screen is a minimal terminal: it understands exactly the sequences the
// live block uses, and records any line that ran past its width.
type screen struct {
	t        *testing.T
	width    int
	rows     [][]rune
	row, col int
	writes   int
}

func (s *screen) Write(b []byte) (int, error) {
	s.writes++
	str := string(b)
	for i := 0; i < len(str); {
		if strings.HasPrefix(str[i:], "\x1b[") {
			j := i + 2
			for j < len(str) && (str[j] >= '0' && str[j] <= '9') {
				j++
			}
			if j >= len(str) {
				s.t.Fatalf("unterminated escape sequence in %q", str)
			}
			n := 1
			if j > i+2 {
				n, _ = strconv.Atoi(str[i+2 : j])
			}
			switch str[j] {
			case 'A':
				s.row = max(s.row-n, 0)
			case 'K':
				s.line()
				s.rows[s.row] = nil
			case 'J':
				s.line()
				s.rows[s.row] = s.rows[s.row][:min(s.col, len(s.rows[s.row]))]
				s.rows = s.rows[:s.row+1]
			default:
				s.t.Fatalf("unexpected escape sequence %q", str[i:j+1])
			}
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(str[i:])
		i += size
		switch {
		case r == '\n':
			s.row++
			s.col = 0
		case r == '\r':
			s.col = 0
		case r < ' ' || r == 0x7f:
			s.t.Fatalf("control character %q written to the terminal", r)
		default:
			s.line()
			if s.col >= s.width {
				s.t.Errorf("line longer than %d columns: %q", s.width, string(s.rows[s.row])+string(r))
			}
			for len(s.rows[s.row]) <= s.col {
				s.rows[s.row] = append(s.rows[s.row], ' ')
			}
			s.rows[s.row][s.col] = r
			s.col++
		}
	}
	return len(b), nil
}

// line makes sure the cursor's row exists.
func (s *screen) line() {
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, nil)
	}
}

func (s *screen) lines() []string {
	var out []string
	for _, r := range s.rows {
		out = append(out, string(r))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func TestProgressTTY(t *testing.T) {
	events := scenario()
	tests := []struct {
		name  string
		width int
		// after: the index of the event after which to look at the live block.
		after int
		// live: the lines expected at that point, each a prefix (lines may
		// be truncated at narrow widths).
		live []string
		// final: the screen after Close.
		final []string
	}{
		{
			name:  "wide",
			width: 100,
			after: 10, // tester runs Bash; explorer is still searching
			live: []string{
				"⠋ reviewer  review the diff  7s  3.4k tokens  Agent check the tests",
				"  ⠋ general-purpose  check the tests  1s  1.2k tokens  Bash go test ./internal/inventory/... -run…",
				"⠋ explorer  find stock callers  7s  2.2k tokens  Glob **/*_test.go",
			},
			final: []string{
				"✗ explorer  find stock callers  failed after 11s, 4.8k tokens, 2 tool uses: model overloaded (529)",
				"  ✓ general-purpose  check the tests  done in 8s, 2.5k tokens, 1 tool use",
				"✓ reviewer  review the diff  done in 16s, 5.5k tokens, 2 tool uses",
			},
		},
		{
			name:  "narrow",
			width: 40,
			after: 10,
			live: []string{
				"⠋ reviewer  review the diff  7s  3.4k…",
				"  ⠋ general-purpose  check the tests…",
				"⠋ explorer  find stock callers  7s  2.…",
			},
			final: []string{
				"✗ explorer  find stock callers  failed…",
				"  ✓ general-purpose  check the tests…",
				"✓ reviewer  review the diff  done in 1…",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &screen{t: t, width: tc.width}
			c := &clock{t: t0}
			p := newProgress(s, true, c.now)
			p.cols = func() int { return tc.width }
			for i, e := range events {
				c.set(e.Time)
				before := s.writes
				p.Event(e)
				if s.writes-before > 1 {
					t.Errorf("event %d: %d writes, want at most one per redraw", i, s.writes-before)
				}
				if i == tc.after {
					if diff := cmp.Diff(tc.live, s.lines()); diff != "" {
						t.Errorf("live block after event %d (-want +got):\n%s", i, diff)
					}
				}
			}
			p.Close()
			p.Close()
			got := s.lines()
			if diff := cmp.Diff(tc.final, got); diff != "" {
				t.Errorf("final screen (-want +got):\n%s", diff)
			}
			for _, l := range got {
				if strings.ContainsRune(l, spinner[0]) {
					t.Errorf("live line left after Close: %q", l)
				}
			}
		})
	}
}

// TestProgressTick checks that ticks advance the spinner and elapsed time on
// a terminal, and write nothing in plain mode or after Close.
func TestProgressTick(t *testing.T) {
	s := &screen{t: t, width: 80}
	c := &clock{t: t0}
	p := newProgress(s, true, c.now)
	p.cols = func() int { return 80 }
	p.Tick() // nothing running: nothing to draw
	if s.writes != 0 {
		t.Fatalf("tick with nothing running wrote %d times", s.writes)
	}
	p.Event(prompt(reviewer, 0))
	c.set(t0.Add(75 * time.Second))
	p.Tick()
	want := []string{"⠙ reviewer  review the diff  1m15s  0 tokens"}
	if diff := cmp.Diff(want, s.lines()); diff != "" {
		t.Errorf("after a tick (-want +got):\n%s", diff)
	}
	p.Close()
	writes := s.writes
	p.Tick()
	p.Event(say(reviewer, 80, 10, llm.Text("hi")))
	if s.writes != writes {
		t.Errorf("wrote after Close")
	}
	if got := s.lines(); len(got) != 0 {
		t.Errorf("screen after Close = %q, want empty", got)
	}

	var buf bytes.Buffer
	plain := newProgress(&buf, false, c.now)
	plain.Event(prompt(reviewer, 0))
	buf.Reset()
	plain.Tick()
	if buf.Len() != 0 {
		t.Errorf("plain tick wrote %q", buf.String())
	}
}

// TestProgressManyRuns checks that the live block stays short enough to be
// redrawn in place.
func TestProgressManyRuns(t *testing.T) {
	s := &screen{t: t, width: 80}
	c := &clock{t: t0}
	p := newProgress(s, true, c.now)
	for i := range 12 {
		p.Event(prompt(agentTag{fmt.Sprintf("toolu_%d", i), "worker", fmt.Sprintf("part %d", i)}, 0))
	}
	got := s.lines()
	if len(got) != maxLive {
		t.Fatalf("live block has %d lines, want %d: %q", len(got), maxLive, got)
	}
	if want := "  … and 5 more running"; got[maxLive-1] != want {
		t.Errorf("last line = %q, want %q", got[maxLive-1], want)
	}
	// The main result ends the display before the answer is printed.
	p.Event(mainResult(1))
	if got := s.lines(); len(got) != 0 {
		t.Errorf("screen after the main result = %q, want empty", got)
	}
}

// TestProgressRace feeds events and ticks from two goroutines, as runPrompt
// does; run it with -race.
func TestProgressRace(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: t0}
	p := newProgress(&lockedWriter{w: &buf}, true, c.now)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				p.Tick()
			}
		}
	})
	for _, e := range scenario() {
		c.set(e.Time)
		p.Event(e)
	}
	close(done)
	wg.Wait()
	p.Close()
	if !strings.Contains(buf.String(), "✓ reviewer") {
		t.Errorf("output lacks the reviewer's final line:\n%s", buf.String())
	}
}

// lockedWriter lets the test read what was written while progress writes.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestIsTerminalWriter(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		w    any
		want bool
	}{
		{"buffer", &bytes.Buffer{}, false},
		{"regular file", f, false},
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		tests = append(tests, struct {
			name string
			w    any
			want bool
		}{"terminal", tty, true})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w.(interface{ Write([]byte) (int, error) })
			if got := isTerminalWriter(w); got != tc.want {
				t.Errorf("isTerminalWriter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestToolLabel(t *testing.T) {
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"Read", map[string]any{"file_path": "inventory/stock.go"}, "Read inventory/stock.go"},
		{"Read", map[string]any{"file_path": "/a/very/long/path/that/goes/on/and/on/inventory/stock.go", "offset": 3}, "Read …/that/goes/on/and/on/inventory/stock.go"},
		{"Grep", map[string]any{"pattern": "func main", "path": "cmd"}, "Grep func main"},
		{"Bash", map[string]any{"command": "for f in *.go; do gofmt -l \"$f\"; done && go vet ./..."}, "Bash for f in *.go; do gofmt -l \"$f\"; done &…"},
		{"WebFetch", map[string]any{"url": "https://example.com"}, "WebFetch https://example.com"},
		{"Edit", map[string]any{"file_path": ""}, "Edit"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := toolLabel(call("id", tc.name, tc.input)); got != tc.want {
				t.Errorf("toolLabel = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProgressColor: an agent's colour shows on a terminal unless colour
// is off (NO_COLOR), and never in plain lines.
func TestProgressColor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tty, color bool
		want       bool
	}{
		{"terminal", true, true, true},
		{"terminal with NO_COLOR", true, false, false},
		{"plain", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(&buf, tc.tty, (&clock{t: t0}).now)
			p.color = tc.color
			p.cols = func() int { return 200 }
			start := prompt(reviewer, 0)
			start.AgentColor = "red"
			p.Event(say(mainAgent, 0, 10, agentCall(reviewer)))
			p.Event(start)
			p.Event(results(mainAgent, 1, llm.ToolResult(reviewer.parent, "ok", false)))
			p.Close()
			if got := strings.Contains(buf.String(), "\x1b[31m"); got != tc.want {
				t.Errorf("red shown = %v, want %v: %q", got, tc.want, buf.String())
			}
		})
	}
	if colorAllowed(func(string) string { return "1" }) || !colorAllowed(func(string) string { return "" }) {
		t.Error("colorAllowed does not follow NO_COLOR")
	}
}
