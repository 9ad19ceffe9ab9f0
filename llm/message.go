package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a content block.
type BlockType string

const (
	BlockText             BlockType = "text"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
	BlockImage            BlockType = "image"
)

// Block is one piece of message content. It is a single struct rather than an
// interface per kind so that it round-trips through JSON (transcripts,
// stream-json, scenario files) without a registry of types; Type says which
// fields are meaningful.
type Block struct {
	Type BlockType `json:"type"`

	// text
	Text string `json:"text,omitempty"`

	// thinking / redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`

	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []Block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	// image
	Source *ImageSource `json:"source,omitempty"`

	// Cache asks providers that support prompt caching to mark a cache
	// breakpoint after this block: everything up to it is a prefix that
	// other requests (forks of one conversation) share. Never serialised.
	Cache bool `json:"-"`
	// PerTurn marks context that belongs to one request only (the
	// <system-reminder> the loop adds to the newest user message): it is
	// never recorded, Message.Text leaves it out, and providers that cache
	// prompts keep their breakpoints before it, so that the cached prefix
	// does not change with it. Never serialised.
	PerTurn bool `json:"-"`
}

// ImageSource is an inline image.
type ImageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// UnmarshalJSON accepts a tool_result's content as a plain string too, as
// the Anthropic API and Claude Code's stream-json allow.
func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block
	var raw struct {
		plain
		Content json.RawMessage `json:"content,omitempty"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = Block(raw.plain)
	b.Content = nil
	c := bytes.TrimSpace(raw.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		b.Content = []Block{Text(s)}
	default:
		if err := json.Unmarshal(c, &b.Content); err != nil {
			return err
		}
	}
	return nil
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUse returns a tool_use block. A nil input becomes {}.
func ToolUse(id, name string, input json.RawMessage) Block {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns a tool_result block holding a single text block.
func ToolResult(toolUseID, text string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: []Block{Text(text)}, IsError: isError}
}

// Message is one turn of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// MarshalJSON writes content as an array even when it is empty: the
// Anthropic and stream-json shape never has "content": null.
func (m Message) MarshalJSON() ([]byte, error) {
	// Escape nothing here: the caller's encoder escapes HTML characters or
	// not, as it was told, when it copies these bytes.
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes m's JSON to w — what MarshalJSON returns — a block at
// a time, HTML characters unescaped: a message of 10,000 tool results (a
// launch of as many background agents) is never whole in one of
// encoding/json's buffers, which it pools and keeps at their largest.
func (m Message) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// part writes v as encoding/json would inside the message: a block by
	// its address, as an element of a slice is addressable.
	part := func(before string, v any) error {
		buf.Reset()
		buf.WriteString(before)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	if err := part(`{"role":`, m.Role); err != nil {
		return err
	}
	sep := `,"content":[`
	for i := range m.Content {
		if err := part(sep, &m.Content[i]); err != nil {
			return err
		}
		sep = ","
	}
	end := "]}"
	if len(m.Content) == 0 {
		end = sep + end // no block opened the array
	}
	_, err := io.WriteString(w, end)
	return err
}

// UserText returns a user message holding one text block.
func UserText(s string) Message {
	return Message{Role: RoleUser, Content: []Block{Text(s)}}
}

// Text returns the concatenated text blocks of m (tool results and
// per-turn context excluded).
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText && !c.PerTurn {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the tool_use blocks of m in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, c := range m.Content {
		if c.Type == BlockToolUse {
			out = append(out, c)
		}
	}
	return out
}

// ResultText returns the text of a tool_result block's content.
func (b Block) ResultText() string {
	// Most results are one text block: its string is the answer, not a
	// copy of it (a model reading 10,000 results made 7 MB of them).
	if len(b.Content) == 1 && b.Content[0].Type == BlockText {
		return b.Content[0].Text
	}
	var s strings.Builder
	for _, c := range b.Content {
		if c.Type == BlockText {
			s.WriteString(c.Text)
		}
	}
	return s.String()
}
