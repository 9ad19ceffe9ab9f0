package session_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

func user(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

func assistant(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

func use(id string) llm.Block { return llm.ToolUse(id, "Bash", nil) }

func result(id string) llm.Block { return llm.ToolResult(id, "ok "+id, false) }

func interrupted(id string) llm.Block {
	return llm.ToolResult(id, "interrupted: the session ended before this tool finished", true)
}

func entriesOf(msgs ...llm.Message) []session.Entry {
	var out []session.Entry
	for _, m := range msgs {
		out = append(out, session.Entry{Type: string(m.Role), Message: &m})
	}
	return out
}

func TestMessages(t *testing.T) {
	text := llm.Text
	tests := []struct {
		name    string
		entries []session.Entry
		want    []llm.Message
	}{
		{
			name:    "empty",
			entries: nil,
			want:    []llm.Message{},
		},
		{
			name: "only user and assistant entries, in order, not merged",
			entries: append([]session.Entry{
				{Type: session.EntrySystem, Subtype: "init"},
				{Type: session.EntryUser, Message: ptr(user(text("one")))},
				{Type: session.EntryUser, Message: ptr(user(text("two")))},
				{Type: session.EntrySummary, Data: []byte(`"s"`)},
				{Type: session.EntryUser}, // no message
			}, entriesOf(assistant(text("a")), assistant(text("b")))...),
			want: []llm.Message{user(text("one")), user(text("two")), assistant(text("a")), assistant(text("b"))},
		},
		{
			name:    "complete tool round is unchanged",
			entries: entriesOf(user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"), result("t2")), assistant(text("done"))),
			want:    []llm.Message{user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"), result("t2")), assistant(text("done"))},
		},
		{
			name:    "killed during a tool: dangling tool_use at the tail",
			entries: entriesOf(user(text("go")), assistant(text("running"), use("t1"), use("t2"))),
			want: []llm.Message{user(text("go")), assistant(text("running"), use("t1"), use("t2")),
				user(interrupted("t1"), interrupted("t2"))},
		},
		{
			name:    "killed during parallel tools: some results recorded",
			entries: entriesOf(user(text("go")), assistant(use("t1"), use("t2"), use("t3")), user(result("t2"))),
			want: []llm.Message{user(text("go")), assistant(use("t1"), use("t2"), use("t3")),
				user(result("t2"), interrupted("t1"), interrupted("t3"))},
		},
		{
			name: "resumed after a kill: dangling tool_use in the middle, new prompt follows",
			entries: entriesOf(user(text("go")), assistant(use("t1")), user(text("continue please")),
				assistant(text("ok"))),
			want: []llm.Message{user(text("go")), assistant(use("t1")), user(interrupted("t1"), text("continue please")),
				assistant(text("ok"))},
		},
		{
			name:    "two assistant messages in a row, the first with a tool_use",
			entries: entriesOf(user(text("go")), assistant(use("t1")), assistant(text("again"))),
			want:    []llm.Message{user(text("go")), assistant(use("t1")), user(interrupted("t1")), assistant(text("again"))},
		},
		{
			name:    "orphan tool_result (its assistant line was lost) is dropped",
			entries: entriesOf(user(text("go")), user(result("lost"), text("and then?")), assistant(text("hm"))),
			want:    []llm.Message{user(text("go")), user(text("and then?")), assistant(text("hm"))},
		},
		{
			name:    "a user message of orphan results only disappears",
			entries: entriesOf(user(text("go")), user(result("lost")), assistant(text("hm"))),
			want:    []llm.Message{user(text("go")), assistant(text("hm"))},
		},
		{
			name:    "duplicate result dropped, results moved before text",
			entries: entriesOf(assistant(use("t1")), user(text("note"), result("t1"), result("t1"))),
			want:    []llm.Message{assistant(use("t1")), user(result("t1"), text("note"))},
		},
		{
			name: "a compact boundary restarts the context from its summary and kept messages",
			entries: cat(
				entriesOf(user(text("go")), assistant(use("t1")), user(result("t1")), assistant(use("t2")), user(result("t2"))),
				[]session.Entry{boundary(t, user(text("summary")), assistant(use("t2")), user(result("t2")))},
				entriesOf(assistant(text("done")))),
			want: []llm.Message{user(text("summary")), assistant(use("t2")), user(result("t2")), assistant(text("done"))},
		},
		{
			name: "the last of two boundaries wins",
			entries: cat(
				entriesOf(user(text("go")), assistant(text("a"))),
				[]session.Entry{boundary(t, user(text("first")))},
				entriesOf(user(text("more")), assistant(text("b"))),
				[]session.Entry{boundary(t, user(text("second")), user(text("more")), assistant(text("b")))},
				entriesOf(user(text("again")))),
			want: []llm.Message{user(text("second")), user(text("more")), assistant(text("b")), user(text("again"))},
		},
		{
			name: "a boundary whose data cannot be read starts with the summary alone",
			entries: cat(
				entriesOf(user(text("go")), assistant(text("a"))),
				[]session.Entry{{Type: session.EntrySummary, Subtype: session.SubtypeCompactBoundary, Message: ptr(user(text("summary"))), Data: []byte(`{"kept":3}`)}},
				entriesOf(user(text("next")))),
			want: []llm.Message{user(text("summary")), user(text("next"))},
		},
		{
			name: "a boundary without a message, or another summary entry, changes nothing",
			entries: cat(
				entriesOf(user(text("go"))),
				[]session.Entry{
					{Type: session.EntrySummary, Subtype: session.SubtypeCompactBoundary},
					{Type: session.EntrySummary, Subtype: "title", Message: ptr(user(text("not a boundary")))},
				},
				entriesOf(assistant(text("a")))),
			want: []llm.Message{user(text("go")), assistant(text("a"))},
		},
		{
			name: "repairs apply after a boundary: killed during a kept tool call",
			entries: cat(
				entriesOf(user(text("go")), assistant(text("a")), user(text("next"))),
				[]session.Entry{boundary(t, user(text("summary")), user(text("next")))},
				entriesOf(assistant(use("t3")), user(result("lost"), text("resumed")))),
			want: []llm.Message{user(text("summary")), user(text("next")), assistant(use("t3")),
				user(interrupted("t3"), text("resumed"))},
		},
		{
			name: "a tool call pending at the boundary is not answered by what follows it",
			entries: cat(
				entriesOf(user(text("go")), assistant(use("t1"))),
				[]session.Entry{boundary(t, user(text("summary")))},
				entriesOf(user(result("t1"), text("hello")))),
			want: []llm.Message{user(text("summary")), user(text("hello"))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneEntries(tt.entries)
			got := session.Messages(tt.entries)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.entries); diff != "" {
				t.Errorf("Messages modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func cloneEntries(entries []session.Entry) []session.Entry {
	if entries == nil {
		return nil
	}
	out := make([]session.Entry, len(entries))
	for i, e := range entries {
		if e.Message != nil {
			m := *e.Message
			m.Content = append([]llm.Block(nil), m.Content...)
			e.Message = &m
		}
		out[i] = e
	}
	return out
}

func TestInterruptedResultText(t *testing.T) {
	if got, want := session.InterruptedResult(), "interrupted: the session ended before this tool finished"; got != want {
		t.Errorf("InterruptedResult() = %q, want %q", got, want)
	}
}

func cat(parts ...[]session.Entry) []session.Entry {
	var out []session.Entry
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// boundary is a compact_boundary entry with summary, keeping kept.
func boundary(t *testing.T, summary llm.Message, kept ...llm.Message) session.Entry {
	t.Helper()
	data, err := json.Marshal(session.CompactBoundary{Trigger: "auto", PreTokens: 1000, Kept: kept})
	if err != nil {
		t.Fatal(err)
	}
	return session.Entry{Type: session.EntrySummary, Subtype: session.SubtypeCompactBoundary, Message: &summary, Data: data}
}
