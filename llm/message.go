package llm

import (
	"encoding/json"
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
}

// ImageSource is an inline image.
type ImageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
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

// UserText returns a user message holding one text block.
func UserText(s string) Message {
	return Message{Role: RoleUser, Content: []Block{Text(s)}}
}

// Text returns the concatenated text blocks of m (tool results excluded).
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
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
	var s strings.Builder
	for _, c := range b.Content {
		if c.Type == BlockText {
			s.WriteString(c.Text)
		}
	}
	return s.String()
}
