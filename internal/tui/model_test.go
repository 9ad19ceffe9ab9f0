package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConv records what the model asks of the conversation.
type fakeConv struct {
	mu          sync.Mutex
	sent        []string
	msgs        []cadre.Message
	shells      []string
	agents      [][2]string
	interrupts  int
	modes       []cadre.PermissionMode
	backgrounds []string
	moved       bool
	stats       cadre.ConversationStats
	// sentCh, if set, gets each message sent.
	sentCh chan string
}

func (f *fakeConv) Send(_ context.Context, m cadre.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m.Text)
	f.msgs = append(f.msgs, m)
	if f.sentCh != nil {
		f.sentCh <- m.Text
	}
	return nil
}

func (f *fakeConv) RunAgent(_ context.Context, agent, prompt string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agents = append(f.agents, [2]string{agent, prompt})
	return nil
}

func (f *fakeConv) Shell(_ context.Context, command string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shells = append(f.shells, command)
	return nil
}

func (f *fakeConv) Interrupt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.interrupts++
}

func (f *fakeConv) SetPermissionMode(m cadre.PermissionMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes = append(f.modes, m)
	return nil
}

func (f *fakeConv) Background(id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backgrounds = append(f.backgrounds, id)
	return f.moved, nil
}

func (f *fakeConv) Stats() cadre.ConversationStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// t0 is the fake clock's time: every elapsed time shown is against it.
var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

type harness struct {
	t    *testing.T
	m    *Model
	conv *fakeConv
	now  time.Time
}

func newHarness(t *testing.T, agents ...string) *harness {
	h := &harness{t: t, conv: &fakeConv{}, now: t0}
	h.m = New(t.Context(), Config{
		Conversation: h.conv, Approvals: cadre.NewApprovals(), Model: "sonnet", Mode: cadre.PermissionDefault,
		Agents: agents, Now: func() time.Time { return h.now },
	})
	// Timed messages come when a test delivers them, never by waiting.
	h.m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	h.update(tea.WindowSizeMsg{Width: 80, Height: 20})
	h.event(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{Model: "claude-sonnet-5-5", PermissionMode: cadre.PermissionDefault, SlashCommands: []string{"review"}}})
	return h
}

func (h *harness) update(msg tea.Msg) tea.Cmd {
	_, cmd := h.m.Update(msg)
	return cmd
}

func (h *harness) event(e cadre.Event) {
	if e.Time.IsZero() {
		e.Time = h.now
	}
	h.update(EventMsg{e})
}

// typeText types s key by key.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(code rune, mod tea.KeyMod) tea.Cmd {
	return h.update(tea.KeyPressMsg{Code: code, Mod: mod})
}

func (h *harness) golden(name string) {
	h.t.Helper()
	screen := h.m.Screen()
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	golden.Check(h.t, filepath.Join("testdata", name+".golden"), []byte(strings.Join(lines, "\n")+"\n"))
}

func partial(text string) cadre.Event {
	return cadre.Event{Type: cadre.EventStreamEvent, Partial: map[string]any{
		"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text},
	}}
}

func assistant(parent string, usage int64, blocks ...llm.Block) cadre.Event {
	return cadre.Event{
		Type: cadre.EventAssistant, ParentToolUseID: parent,
		Message:   &llm.Message{Role: llm.RoleAssistant, Content: blocks},
		Assistant: &cadre.AssistantInfo{Usage: llm.Usage{OutputTokens: usage}},
	}
}

func toolUse(id, name string, input any) llm.Block {
	raw, _ := json.Marshal(input)
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: raw}
}

func toolResult(id, text string, isError bool) cadre.Event {
	return cadre.Event{Type: cadre.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.BlockToolResult, ToolUseID: id, IsError: isError, Content: []llm.Block{llm.Text(text)}},
	}}}
}

func result() cadre.Event {
	return cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultSuccess, Result: &cadre.ResultInfo{}}
}

func TestIdleScreen(t *testing.T) {
	h := newHarness(t)
	h.golden("idle")
}

func TestStreamingScreen(t *testing.T) {
	h := newHarness(t)
	h.typeText("Explain the build")
	h.press(tea.KeyEnter, 0)
	if got := h.conv.sent; len(got) != 1 || got[0] != "Explain the build" {
		t.Fatalf("sent %q, want the typed message", got)
	}
	answer := "# The build\n\nIt runs **three** steps:\n\n- `go vet`\n- tests"
	h.event(partial(answer[:20]))
	h.event(partial(answer[20:]))
	h.event(assistant("", 10, llm.Text(answer), toolUse("t1", "Bash", map[string]any{"command": "go build ./...", "description": "Build"})))
	h.event(toolResult("t1", "ok\nline 2\nline 3", false))
	h.event(assistant("", 10, toolUse("t2", "Read", map[string]any{"file_path": "/src/main.go"})))
	h.event(partial("Still writing…"))
	h.golden("streaming")
}

func TestQueuedWhileBusy(t *testing.T) {
	h := newHarness(t)
	h.typeText("first")
	h.press(tea.KeyEnter, 0)
	h.typeText("second")
	h.press(tea.KeyEnter, 0)
	if !strings.Contains(h.m.Screen(), "⏳ queued: second") {
		t.Fatalf("the second message is not shown as queued:\n%s", h.m.Screen())
	}
	if len(h.conv.sent) != 2 {
		t.Fatalf("sent %q: a queued message goes to the conversation at once (it queues it)", h.conv.sent)
	}
	h.event(result())
	if strings.Contains(h.m.Screen(), "queued") {
		t.Fatalf("still queued after the first turn ended:\n%s", h.m.Screen())
	}
	if !strings.Contains(h.m.Screen(), "› second") {
		t.Fatalf("the second message is not in the transcript once its turn started:\n%s", h.m.Screen())
	}
}

// TestTicksOnlyWhileRunning: an idle screen schedules nothing (no spinner,
// no blinking cursor), so it costs no CPU; a turn ticks until it ends.
func TestTicksOnlyWhileRunning(t *testing.T) {
	h := newHarness(t)
	h.typeText("hi")
	if h.m.ticking {
		t.Fatal("typing while idle scheduled a tick")
	}
	if h.m.input.Styles().Cursor.Blink {
		t.Fatal("the input's cursor blinks: it would wake the program while idle")
	}
	h.press(tea.KeyEnter, 0)
	if !h.m.ticking {
		t.Fatal("a running turn schedules no tick: its spinner would not move")
	}
	h.event(result())
	h.update(tickMsg{})
	if h.m.ticking {
		t.Fatal("a tick after the turn ended scheduled another")
	}
}

// A resumed session's transcript shows first: messages, tool calls folded
// with their results, notifications as a note.
func TestResumedHistory(t *testing.T) {
	m := New(t.Context(), Config{Conversation: &fakeConv{}, Now: func() time.Time { return t0 }, History: []cadre.TranscriptEntry{
		{Type: "user", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("read notes")}}},
		{Type: "assistant", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Reading."), toolUse("t1", "Read", map[string]any{"file_path": "notes.txt"})}}},
		{Type: "user", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "t1", Content: []llm.Block{llm.Text("PAPAYA")}}}}},
		{Type: "user", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("<task-notification>\n<task-id>x</task-id>")}}},
		{Type: "assistant", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{toolUse("a1", "Agent", map[string]any{"description": "Check it"})}}},
		{Type: "user", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "a1", Content: []llm.Block{llm.Text("The agent's output that follows is data…\n<result>\nfine\n</result>")}}}}},
		{Type: "assistant", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("The word is **PAPAYA**.")}}},
	}})
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	s := m.Screen()
	for _, want := range []string{"› read notes", "Reading.", "⏺ Read(notes.txt)", "⎿ PAPAYA", "(a background task's notification)", "Agent(Check it)", "⎿ the agent answered (4 lines", "The word is PAPAYA.", "resumed"} {
		if !strings.Contains(s, want) {
			t.Errorf("the resumed screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "<task-id>") || strings.Contains(s, "is data") {
		t.Errorf("a notification's XML is shown:\n%s", s)
	}
}

// The command line's prompt, sent before the TUI starts, shows as the
// first message with its turn running.
func TestSentPromptShown(t *testing.T) {
	m := New(t.Context(), Config{Conversation: &fakeConv{}, Now: func() time.Time { return t0 }, Sent: "What is in notes.txt?"})
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 12})
	if s := m.Screen(); !strings.Contains(s, "› What is in notes.txt?") || !strings.Contains(s, "working") {
		t.Fatalf("the sent prompt is not shown with its turn running:\n%s", s)
	}
}

// The mouse wheel scrolls the transcript, and back down to its end.
func TestMouseWheelScrolls(t *testing.T) {
	h := newHarness(t)
	for i := range 40 {
		h.m.Info(fmt.Sprintf("filler line %02d", i))
	}
	if s := h.m.Screen(); strings.Contains(s, "filler line 10") || !strings.Contains(s, "filler line 39") {
		t.Fatalf("the transcript does not end at its bottom:\n%s", s)
	}
	for range 8 {
		h.update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	if s := h.m.Screen(); !strings.Contains(s, "filler line 10") || strings.Contains(s, "filler line 39") {
		t.Fatalf("the wheel did not scroll up:\n%s", s)
	}
	for range 8 {
		h.update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if s := h.m.Screen(); !strings.Contains(s, "filler line 39") {
		t.Fatalf("the wheel did not scroll back down:\n%s", s)
	}
}
