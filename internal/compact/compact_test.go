package compact_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
)

func user(s string) llm.Message { return llm.UserText(s) }

func assistant(s string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(s)}}
}

func call(id string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse(id, "Read", nil)}}
}

func result(id string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(id, "contents of "+id, false)}}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int64
	}{
		{"claude-sonnet-5-5", 1000000},
		{"claude-opus-5-5-20261001", 1000000},
		{"gpt-5.6-sol", 1050000},
		{"claude-sonnet-4-5", 200000},
		{"claude-sonnet-4-5-20250929", 200000},
		{"claude-3-5-haiku-latest", 200000},
		{"claude-opus-4-1", 200000},
		{"anthropic/claude-sonnet-4.5", 200000},
		{"gpt-4o", 128000},
		{"gpt-4o-mini", 128000},
		{"gpt-4o-2024-08-06", 128000},
		{"gpt-4-turbo", 128000},
		{"gpt-4.1", 1047576},
		{"gpt-4.1-mini", 1047576},
		{"GPT-4.1-nano", 1047576},
		{"gpt-5", 400000},
		{"gpt-5-mini", 400000},
		{"gpt-5.1", 400000},
		{"o1", 200000},
		{"o1-mini", 128000},
		{"o3", 200000},
		{"o3-mini", 200000},
		{"o4-mini", 200000},
		{"o30", 0},
		{"gpt-4", 0},
		{"llama3.1:8b", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := compact.Window(tt.model); got != tt.want {
			t.Errorf("Window(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}

func TestConfigForModelAndValidate(t *testing.T) {
	tests := []struct {
		name  string
		in    compact.Config
		model string
		want  compact.Config
	}{
		{"zero, known model", compact.Config{}, "claude-sonnet-4-5", compact.Config{Window: 200000, Threshold: 0.8, KeepRecent: 6}},
		{"zero, unknown model", compact.Config{}, "mystery", compact.Config{Window: 128000, Threshold: 0.8, KeepRecent: 6}},
		{"settings win over the table", compact.Config{Window: 50000, Threshold: 0.5, KeepRecent: 2}, "claude-sonnet-4-5", compact.Config{Window: 50000, Threshold: 0.5, KeepRecent: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.ForModel(tt.model)); diff != "" {
				t.Errorf("ForModel (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []compact.Config{{Window: -1}, {Threshold: -0.1}, {Threshold: 1.5}, {KeepRecent: -2}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
	for _, good := range []compact.Config{{}, {Threshold: 1}, {Window: 1000, Threshold: 0.01, KeepRecent: 1}} {
		if err := good.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", good, err)
		}
	}
}

func TestNeeded(t *testing.T) {
	c := compact.Config{Window: 1000, Threshold: 0.5}
	tests := []struct {
		name  string
		c     compact.Config
		usage llm.Usage
		want  bool
	}{
		{"nothing reported", c, llm.Usage{}, false},
		{"at the threshold", c, llm.Usage{InputTokens: 500}, false},
		{"past it on input alone", c, llm.Usage{InputTokens: 501}, true},
		{"every kind of token counts", c, llm.Usage{InputTokens: 100, CacheReadInputTokens: 200, CacheCreationInputTokens: 150, OutputTokens: 51}, true},
		{"cache tokens just under", c, llm.Usage{InputTokens: 100, CacheReadInputTokens: 200, CacheCreationInputTokens: 150, OutputTokens: 50}, false},
		{"defaults: 0.8 of 128000", compact.Config{}, llm.Usage{InputTokens: 102401}, true},
		{"defaults: just under", compact.Config{}, llm.Usage{InputTokens: 102400}, false},
	}
	for _, tt := range tests {
		if got := tt.c.Needed(tt.usage); got != tt.want {
			t.Errorf("%s: Needed(%+v) = %v, want %v", tt.name, tt.usage, got, tt.want)
		}
	}
}

func TestCompact(t *testing.T) {
	long := []llm.Message{user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3"), assistant("a3"), user("u4"), assistant("a4")}
	tools := []llm.Message{user("go"), call("t1"), result("t1"), call("t2"), result("t2"), call("t3"), result("t3")}
	tests := []struct {
		name string
		keep int
		msgs []llm.Message
		// older is how many messages are summarised; -1 means none.
		older int
	}{
		{"kept part starts at an assistant message", 3, long, 5},
		{"a user message at the split moves it earlier", 2, long, 5},
		{"kept part starts at a tool call", 2, tools, 5},
		{"a result is never parted from its call", 1, tools, 5},
		{"default keeps six", 0, append(append([]llm.Message(nil), long...), user("u5")), 3},
		{"a queued message after tool results", 1, []llm.Message{user("go"), call("t1"), result("t1"), user("note")}, 3},
		// A main agent that launched background agents in one turn, with
		// their notifications queued: only the newest stay.
		{"notifications after a launch", 2, []llm.Message{user("go"), call("t1"), result("t1"), user("n1"), user("n2"), user("n3"), user("n4")}, 5},
		{"a result is never the first kept", 2, []llm.Message{user("go"), call("t1"), result("t1"), call("t2"), result("t2")}, 3},
		{"user messages only", 2, []llm.Message{user("u1"), user("u2"), user("u3")}, 1},
		{"one message", 1, []llm.Message{user("u1")}, -1},
		{"the call chain reaches the start", 1, []llm.Message{call("t1"), result("t1")}, -1},
		{"everything is recent", 6, long[:6], -1},
		{"only a summary is older", 2, []llm.Message{compact.Summary("before"), call("t1"), result("t1")}, -1},
		{"a summary and more is older", 2, []llm.Message{compact.Summary("before"), user("u"), call("t1"), result("t1")}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneMsgs(tt.msgs)
			var got []llm.Message
			summarize := func(_ context.Context, older []llm.Message) (string, error) {
				got = older
				return fmt.Sprintf("  %d messages  \n", len(older)), nil
			}
			history, summary, err := compact.Compact(t.Context(), compact.Config{KeepRecent: tt.keep}, tt.msgs, summarize)
			if diff := cmp.Diff(before, tt.msgs); diff != "" {
				t.Errorf("Compact modified its input (-before +after):\n%s", diff)
			}
			if tt.older < 0 {
				if !errors.Is(err, compact.ErrNothingToCompact) || got != nil {
					t.Fatalf("err = %v, summarizer saw %d messages; want ErrNothingToCompact without a summary", err, len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.msgs[:tt.older], got); diff != "" {
				t.Errorf("summarised (-want +got):\n%s", diff)
			}
			want := append([]llm.Message{compact.SummaryOf(fmt.Sprintf("%d messages", tt.older), compact.Replies(tt.msgs[:tt.older]))}, tt.msgs[tt.older:]...)
			if diff := cmp.Diff(want, history); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(history[0], summary); diff != "" {
				t.Errorf("summary is not the first message of the history:\n%s", diff)
			}
			if err := valid(history); err != nil {
				t.Errorf("history is not valid for a provider: %v", err)
			}
			if got[len(got)-1].Role != llm.RoleUser {
				t.Errorf("the older part ends with a %s message; want user (the summarizer's directive goes there)", got[len(got)-1].Role)
			}
			for _, b := range history[1].Content {
				if b.Type == llm.BlockToolResult {
					t.Errorf("the kept part starts with a tool result, parted from its call")
				}
			}
		})
	}
}

func TestSummaryMessage(t *testing.T) {
	m := compact.Summary("The user wants X.")
	text := m.Text()
	if m.Role != llm.RoleUser || !strings.HasPrefix(text, "<context-summary>\n") || !strings.HasSuffix(text, "\n</context-summary>") {
		t.Errorf("summary %q: want a user message wrapped in <context-summary> tags", text)
	}
	if !strings.Contains(text, "Earlier turns of this conversation were summarised to save context") || !strings.Contains(text, "The user wants X.") {
		t.Errorf("summary %q lacks the note or the summary", text)
	}
	if !compact.IsSummary(m) || compact.IsSummary(user("hello")) || compact.IsSummary(assistant(text)) {
		t.Error("IsSummary does not tell summaries apart")
	}
	if !strings.Contains(compact.Instructions(), "summary") {
		t.Errorf("Instructions() = %q", compact.Instructions())
	}
}

func TestCompactErrors(t *testing.T) {
	msgs := []llm.Message{user("u1"), assistant("a1"), user("u2"), assistant("a2")}
	boom := errors.New("model overloaded")
	tests := []struct {
		name      string
		c         compact.Config
		summarize compact.Summarizer
		want      string
		is        error
	}{
		{"summarizer fails", compact.Config{KeepRecent: 1},
			func(context.Context, []llm.Message) (string, error) { return "", boom },
			"summarise 3 older messages", boom},
		{"empty summary", compact.Config{KeepRecent: 1},
			func(context.Context, []llm.Message) (string, error) { return " \n", nil },
			"summary of 3 older messages is empty", nil},
		{"bad config", compact.Config{Threshold: 2},
			func(context.Context, []llm.Message) (string, error) { t.Error("summarizer called"); return "", nil },
			"threshold", nil},
	}
	for _, tt := range tests {
		_, _, err := compact.Compact(t.Context(), tt.c, msgs, tt.summarize)
		if err == nil || !strings.Contains(err.Error(), tt.want) || tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: err = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestHook(t *testing.T) {
	msgs := []llm.Message{user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3")}
	calls := 0
	hook := compact.Hook(compact.Config{Window: 1000, Threshold: 0.5, KeepRecent: 1}, func(_ context.Context, older []llm.Message) (string, error) {
		calls++
		return "sum", nil
	})

	got, summary, err := hook(t.Context(), msgs, llm.Usage{InputTokens: 400})
	if err != nil || summary != nil || calls != 0 || len(got) != len(msgs) {
		t.Fatalf("under the threshold: summary %v, err %v, %d summarizer calls", summary, err, calls)
	}

	got, summary, err = hook(t.Context(), msgs, llm.Usage{InputTokens: 600})
	if err != nil || summary == nil || calls != 1 {
		t.Fatalf("over the threshold: summary %v, err %v, %d summarizer calls", summary, err, calls)
	}
	if diff := cmp.Diff([]llm.Message{compact.SummaryOf("sum", 1), assistant("a2"), user("u3")}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	// Over the threshold with nothing older: no summary, no error.
	got, summary, err = hook(t.Context(), got, llm.Usage{InputTokens: 600})
	if err != nil || summary != nil || calls != 1 || len(got) != 3 {
		t.Errorf("nothing older: summary %v, err %v, %d summarizer calls", summary, err, calls)
	}

	failing := compact.Hook(compact.Config{Window: 10, KeepRecent: 1}, func(context.Context, []llm.Message) (string, error) {
		return "", errors.New("no")
	})
	if _, summary, err := failing(t.Context(), msgs, llm.Usage{InputTokens: 600}); err == nil || summary != nil {
		t.Errorf("failing summarizer: summary %v, err %v", summary, err)
	}
}

// valid checks what providers require of a history: it starts with a user
// message, no two assistant messages follow each other, and each tool_use is
// answered in the very next message, which answers nothing else.
func valid(msgs []llm.Message) error {
	if len(msgs) == 0 || msgs[0].Role != llm.RoleUser {
		return errors.New("the history does not start with a user message")
	}
	var pending map[string]bool
	for i, m := range msgs {
		if i > 0 && m.Role == llm.RoleAssistant && msgs[i-1].Role == llm.RoleAssistant {
			return fmt.Errorf("messages %d and %d are both assistant messages", i-1, i)
		}
		answered := map[string]bool{}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				if !pending[b.ToolUseID] {
					return fmt.Errorf("message %d answers %s, which the message before did not call", i, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			}
		}
		for id := range pending {
			if !answered[id] {
				return fmt.Errorf("message %d leaves %s unanswered", i, id)
			}
		}
		pending = map[string]bool{}
		for _, b := range m.ToolUses() {
			pending[b.ID] = true
		}
	}
	return nil
}

func cloneMsgs(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Content = append([]llm.Block(nil), m.Content...)
		out[i] = m
	}
	return out
}
