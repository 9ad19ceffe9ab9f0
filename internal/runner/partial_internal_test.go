package runner

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
)

// TestPartialEvents: a model's stream becomes the Anthropic API's stream
// events, in its order, whatever the provider; a retry starts over.
func TestPartialEvents(t *testing.T) {
	var got []string
	p := &partial{model: "m", emit: func(e map[string]any) {
		s := e["type"].(string)
		if d, ok := e["delta"].(map[string]any); ok && e["type"] == "content_block_delta" {
			b, _ := json.Marshal(d)
			s += " " + string(b)
		}
		if cb, ok := e["content_block"].(map[string]any); ok {
			s += " " + cb["type"].(string)
		}
		got = append(got, s)
	}}
	for _, ev := range []llm.Event{
		{Type: llm.EventTextDelta, Index: 0, Delta: "void"},
		{Type: llm.EventRetry, Delta: "overloaded"},
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "hm"},
		{Type: llm.EventTextDelta, Index: 1, Delta: "Rea"},
		{Type: llm.EventTextDelta, Index: 1, Delta: "ding"},
		{Type: llm.EventToolUseStart, Index: 2, ID: "toolu_1", Name: "Read"},
		{Type: llm.EventDone, Response: &llm.Response{StopReason: llm.StopToolUse, Usage: llm.Usage{OutputTokens: 9}, Message: llm.Message{
			Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking}, llm.Text("Reading"), llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"file_path":"a"}`))},
		}}},
	} {
		p.event(ev)
	}
	want := []string{
		"message_start", "content_block_start text", `content_block_delta {"text":"void","type":"text_delta"}`,
		"message_start", "content_block_start thinking", `content_block_delta {"thinking":"hm","type":"thinking_delta"}`,
		"content_block_start text", `content_block_delta {"text":"Rea","type":"text_delta"}`, `content_block_delta {"text":"ding","type":"text_delta"}`,
		"content_block_start tool_use", `content_block_delta {"partial_json":"{\"file_path\":\"a\"}","type":"input_json_delta"}`,
		"content_block_stop", "content_block_stop", "content_block_stop", "message_delta", "message_stop",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}
