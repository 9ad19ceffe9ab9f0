package session

import (
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// SubtypeCompactBoundary is the Subtype of the EntrySummary entry a context
// compaction writes: its Message is the summary that replaced the messages
// before it, and its Data a CompactBoundary.
const SubtypeCompactBoundary = "compact_boundary"

// CompactBoundary is the Data of a compact_boundary entry.
type CompactBoundary struct {
	// Trigger is "auto" (the context passed its threshold).
	Trigger string `json:"trigger"`
	// PreTokens is the size of the context that triggered the compaction.
	PreTokens int64 `json:"pre_tokens"`
	// Kept are the messages kept verbatim after the summary. They were
	// recorded before the boundary too; they are repeated here so that the
	// context can be rebuilt from the boundary on, without counting back
	// through entries that repairs may have changed.
	Kept []llm.Message `json:"kept,omitempty"`
}

//go:embed interrupted.md
var interruptedText string

// InterruptedResult is the text of the synthetic tool result Messages gives
// a tool call whose real result was never recorded.
func InterruptedResult() string { return strings.TrimSpace(interruptedText) }

// Messages rebuilds a model context from transcript entries: the message of
// every user and assistant entry, in order, one message per entry (entries
// are not merged). A compact_boundary entry drops every message before it:
// the context starts again with its summary, then the messages it kept
// (CompactBoundary.Kept), and later entries follow. A boundary whose Data
// cannot be read starts with the summary alone.
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
	h := history{out: make([]llm.Message, 0, len(entries)+1)}
	for _, e := range entries {
		switch {
		case e.Message == nil:
		case e.Type == EntrySummary && e.Subtype == SubtypeCompactBoundary:
			h.out, h.pending = h.out[:0], nil
			h.add(*e.Message)
			var b CompactBoundary
			if json.Unmarshal(e.Data, &b) == nil {
				for _, m := range b.Kept {
					h.add(m)
				}
			}
		case e.Type == EntryUser || e.Type == EntryAssistant:
			h.add(*e.Message)
		}
	}
	if len(h.pending) > 0 {
		h.out = append(h.out, interruptedResults(h.pending))
	}
	return h.out
}

// history is a context being rebuilt.
type history struct {
	out     []llm.Message
	pending []string // tool_use ids of the last message
}

// add appends m, repaired against the message before it.
func (h *history) add(m llm.Message) {
	if m.Role != llm.RoleAssistant {
		m = answerToolUses(m, h.pending)
		h.pending = nil
		if len(m.Content) > 0 {
			h.out = append(h.out, m)
		}
		return
	}
	if len(h.pending) > 0 { // two assistant messages in a row
		h.out = append(h.out, interruptedResults(h.pending))
	}
	h.out = append(h.out, m)
	h.pending = toolUseIDs(m)
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
