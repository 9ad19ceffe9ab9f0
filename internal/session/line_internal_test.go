package session

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// TestLineInParts: an entry's line written with its message a block at a
// time is byte for byte the line encoding/json writes in one call, for
// every kind of block, a message with no content, text that JSON escapes
// or must not (HTML), and inputs that encoding/json compacts.
func TestLineInParts(t *testing.T) {
	at := time.Date(2026, 11, 29, 7, 0, 0, 5, time.UTC)
	odd := `<b>"x" & y</b>` + "\u2028\t\x01 ✓"
	msgs := map[string]llm.Message{
		"nil content":   {Role: llm.RoleAssistant},
		"empty content": {Role: llm.RoleUser, Content: []llm.Block{}},
		"text":          llm.UserText(odd),
		"every block": {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text(odd),
			{Type: llm.BlockThinking, Thinking: odd, Signature: "sig"},
			{Type: llm.BlockRedactedThinking, Data: "opaque"},
			{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Bash", Input: json.RawMessage("{ \"command\" :\n \"ls <dir>\" , \"n\": [1, 2] }")},
			{Type: llm.BlockToolUse, ID: "toolu_2", Name: "Read"},
		}},
		"results": {Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_1", odd, true),
			{Type: llm.BlockToolResult, ToolUseID: "toolu_2", Content: []llm.Block{llm.Text("a"), {Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBOR"}}}},
			{Type: llm.BlockToolResult, ToolUseID: "toolu_3"},
		}},
	}
	for name, m := range msgs {
		for _, e := range []Entry{
			{Type: EntryUser, UUID: "u1", SessionID: "s", Timestamp: at, Message: &m},
			{Type: EntryAssistant, UUID: "u2", ParentUUID: "u1", SessionID: "s", Timestamp: at, Message: &m,
				MessageID: "msg_1", Model: "claude-x", StopReason: "tool_use", Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4}},
			{Type: EntrySummary, UUID: "u3", SessionID: "s", Message: &m, Subtype: SubtypeCompactBoundary, Data: json.RawMessage(`{ "trigger": "<auto>" }`)},
		} {
			want, err := encodeWhole(e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s, %s entry:\n got %s\nwant %s", name, e.Type, got, want)
			}
			if !strings.HasSuffix(string(got), "}\n") {
				t.Errorf("%s: the line does not end in }\\n: %q", name, got)
			}
		}
	}
}
