package session

import (
	_ "embed"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

//go:embed interrupted.md
var interruptedText string

// InterruptedResult is the text of the synthetic tool result Messages gives
// a tool call whose real result was never recorded.
func InterruptedResult() string { return strings.TrimSpace(interruptedText) }

// Messages rebuilds a model context from transcript entries: the message of
// every user and assistant entry, in order, one message per entry (entries
// are not merged).
//
// It then repairs what a killed process leaves behind, so the history is
// valid to send to a provider, which requires every tool_use to be answered
// by a tool_result in the very next (user) message:
//   - a tool_use with no result (the process died while the tool ran) gets a
//     synthetic is_error result saying the session ended before the tool
//     finished: added, after any real results, to the user message that
//     follows, or as a new user message if none does;
//   - a tool_result that answers no tool_use of the message before it (its
//     assistant line was lost) is dropped, and so is a user message left
//     empty by that.
//
// The entries' own messages are never modified.
func Messages(entries []Entry) []llm.Message {
	out := make([]llm.Message, 0, len(entries)+1)
	var pending []string // tool_use ids of the previous message
	for _, e := range entries {
		if e.Message == nil || e.Type != EntryUser && e.Type != EntryAssistant {
			continue
		}
		m := *e.Message
		if m.Role != llm.RoleAssistant {
			m = answerToolUses(m, pending)
			pending = nil
			if len(m.Content) > 0 {
				out = append(out, m)
			}
			continue
		}
		if len(pending) > 0 { // two assistant messages in a row
			out = append(out, interruptedResults(pending))
		}
		out = append(out, m)
		pending = toolUseIDs(m)
	}
	if len(pending) > 0 {
		out = append(out, interruptedResults(pending))
	}
	return out
}

func toolUseIDs(m llm.Message) []string {
	var ids []string
	for _, b := range m.Content {
		if b.Type == llm.BlockToolUse {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// interruptedResults is a user message answering every id in ids with the
// synthetic interrupted result.
func interruptedResults(ids []string) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, id := range ids {
		m.Content = append(m.Content, llm.ToolResult(id, InterruptedResult(), true))
	}
	return m
}

// answerToolUses returns user message m made to answer exactly the tool_use
// ids in pending: each once, tool results first. m is returned as it is when
// it already does; otherwise a copy is changed.
func answerToolUses(m llm.Message, pending []string) llm.Message {
	want := make(map[string]bool, len(pending))
	for _, id := range pending {
		want[id] = true
	}
	answered := make(map[string]bool, len(pending))
	var results, rest []llm.Block
	changed := false
	for _, b := range m.Content {
		switch {
		case b.Type != llm.BlockToolResult:
			rest = append(rest, b)
		case want[b.ToolUseID] && !answered[b.ToolUseID]:
			answered[b.ToolUseID] = true
			if len(rest) > 0 { // a result after other content: reordered below
				changed = true
			}
			results = append(results, b)
		default: // an orphan or a duplicate
			changed = true
		}
	}
	for _, id := range pending {
		if !answered[id] {
			results = append(results, llm.ToolResult(id, InterruptedResult(), true))
			changed = true
		}
	}
	if !changed {
		return m
	}
	m.Content = append(results, rest...)
	return m
}
