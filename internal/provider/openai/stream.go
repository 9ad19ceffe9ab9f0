package openai

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/cadre-dev/cadre/llm"
)

// assembler turns the chunks of one stream into llm events and, at the end,
// a response. The SDK's accumulator assembles text, tool calls, finish reason
// and usage; the assembler adds what the SDK does not know (reasoning) and
// decides when an event is due.
type assembler struct {
	acc      openai.ChatCompletionAccumulator
	firstID  string
	thinking strings.Builder
	text     bool
	// tools holds the ids of the tool calls announced so far, by index; an
	// id is generated when a server sends none.
	tools    map[int]string
	finished bool
}

func newAssembler() *assembler {
	return &assembler{tools: map[int]string{}}
}

// add takes in one chunk and returns the events it gives rise to.
//
// Event indexes follow the response's block order (thinking, text, tool
// calls), which is the order servers stream them in.
func (a *assembler) add(chunk openai.ChatCompletionChunk) ([]llm.Event, error) {
	// Some compatible servers vary the id from chunk to chunk; the
	// accumulator would refuse them, though they belong to one completion.
	if a.firstID == "" {
		a.firstID = chunk.ID
	} else {
		chunk.ID = a.firstID
	}
	if !a.acc.AddChunk(chunk) {
		return nil, fmt.Errorf("a chunk could not be added to the completion (bad choice or tool call index?): %.200s", chunk.RawJSON())
	}
	var evs []llm.Event
	for _, ch := range chunk.Choices {
		// One choice was asked for; a server that sends more gets the first
		// one used.
		if ch.Index != 0 {
			continue
		}
		if r := reasoning(ch.Delta); r != "" {
			a.thinking.WriteString(r)
			evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: 0, Delta: r})
		}
		for _, d := range []string{ch.Delta.Content, ch.Delta.Refusal} {
			if d == "" {
				continue
			}
			a.text = true
			evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: a.blocksBefore(blockText), Delta: d})
		}
		for _, tc := range ch.Delta.ToolCalls {
			i := int(tc.Index)
			if i < 0 { // some servers number a lone call -1; the SDK makes it 0
				i = 0
			}
			if _, started := a.tools[i]; started {
				continue
			}
			call := a.toolCall(i)
			if call.Function.Name == "" {
				continue // announced once the name is known
			}
			id := call.ID
			if id == "" {
				id = newCallID()
			}
			index := a.blocksBefore(blockTool) + len(a.tools)
			a.tools[i] = id
			evs = append(evs, llm.Event{Type: llm.EventToolUseStart, Index: index, ID: id, Name: call.Function.Name})
		}
		if ch.FinishReason != "" {
			a.finished = true
		}
	}
	return evs, nil
}

type blockKind int

const (
	blockText blockKind = iota
	blockTool
)

// blocksBefore counts the blocks seen so far that precede a block of kind k.
func (a *assembler) blocksBefore(k blockKind) int {
	n := 0
	if a.thinking.Len() > 0 {
		n++
	}
	if k == blockTool && a.text {
		n++
	}
	return n
}

// toolCall returns the accumulated tool call at index i of the first choice.
func (a *assembler) toolCall(i int) openai.ChatCompletionMessageToolCallUnion {
	if len(a.acc.Choices) == 0 || i >= len(a.acc.Choices[0].Message.ToolCalls) {
		return openai.ChatCompletionMessageToolCallUnion{}
	}
	return a.acc.Choices[0].Message.ToolCalls[i]
}

// contentBytes is how much a chunk adds to the reply, in every choice a
// server sends: text, refusal, reasoning and tool calls.
func contentBytes(chunk openai.ChatCompletionChunk) int {
	n := 0
	for _, ch := range chunk.Choices {
		d := ch.Delta
		n += len(d.Content) + len(d.Refusal) + len(reasoning(d))
		for _, tc := range d.ToolCalls {
			n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	return n
}

// reasoning returns the reasoning text a delta carries, if any. Compatible
// servers use reasoning_content (DeepSeek, vLLM, llama.cpp, Qwen) or
// reasoning (newer vLLM, Ollama, OpenRouter); the first present wins.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[name]
		if !ok || f.Raw() == "" || f.Raw() == "null" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// errNoFinish says the stream ended before the model said why it stopped:
// the message may be incomplete.
var errNoFinish = errors.New("stream ended before the completion finished (no finish_reason)")

// response assembles the final response.
func (a *assembler) response() (*llm.Response, error) {
	cc := a.acc.ChatCompletion
	if !a.finished || len(cc.Choices) == 0 {
		return nil, errNoFinish
	}
	choice := cc.Choices[0]
	var content []llm.Block
	if a.thinking.Len() > 0 {
		content = append(content, llm.Block{Type: llm.BlockThinking, Thinking: a.thinking.String()})
	}
	if text := choice.Message.Content + choice.Message.Refusal; text != "" {
		content = append(content, llm.Text(text))
	}
	calls := 0
	for i, tc := range choice.Message.ToolCalls {
		if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // a gap left by a server that skipped an index
		}
		id := tc.ID
		if id == "" {
			id = a.tools[i]
		}
		if id == "" {
			id = newCallID()
		}
		content = append(content, llm.ToolUse(id, tc.Function.Name, toolInput(tc.Function.Arguments)))
		calls++
	}
	if content == nil {
		content = []llm.Block{}
	}
	u := cc.Usage
	cached := u.PromptTokensDetails.CachedTokens
	return &llm.Response{
		ID:         cc.ID,
		Model:      cc.Model,
		Message:    llm.Message{Role: llm.RoleAssistant, Content: content},
		StopReason: stopReason(choice.FinishReason, calls > 0, choice.Message.Refusal != ""),
		Usage: llm.Usage{
			InputTokens:          max(u.PromptTokens-cached, 0),
			OutputTokens:         u.CompletionTokens,
			CacheReadInputTokens: cached,
		},
	}, nil
}

// toolInput turns streamed arguments into a tool_use input. Empty arguments
// mean no arguments. Arguments that are not valid JSON (a model's mistake)
// are kept, as a JSON string holding them: the block stays valid JSON for
// transcripts, and the tool's schema validation then tells the model that
// its input was not an object, with the text it sent.
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(args) // marshalling a string cannot fail
	return b
}

// stopReason maps a finish_reason onto an llm.StopReason.
func stopReason(finish string, hasCalls, refused bool) llm.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopContentFilter
	}
	// Some compatible servers (older Ollama and llama.cpp) say "stop" even
	// when the message ends in tool calls; the calls are what matters.
	if hasCalls {
		return llm.StopToolUse
	}
	if refused {
		return llm.StopRefusal
	}
	return llm.StopEndTurn
}

// newCallID makes an id for a tool call a server sent without one, so that
// its tool_result can refer to it.
func newCallID() string { return "call_" + rand.Text() }
