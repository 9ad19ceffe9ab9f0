package llm

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// StopReason says why the model stopped. Values follow the Anthropic API;
// adapters for other providers map theirs onto these.
type StopReason string

const (
	StopEndTurn       StopReason = "end_turn"
	StopToolUse       StopReason = "tool_use"
	StopMaxTokens     StopReason = "max_tokens"
	StopSequence      StopReason = "stop_sequence"
	StopRefusal       StopReason = "refusal"
	StopPauseTurn     StopReason = "pause_turn"
	StopContentFilter StopReason = "content_filter"
)

// Usage counts tokens. Input excludes cached tokens, as in the Anthropic API.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
	}
}

// Total is every token counted, cached ones included.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Thinking asks for extended thinking with a token budget; nil means off.
type Thinking struct {
	BudgetTokens int64 `json:"budget_tokens"`
}

// Request is one model call.
type Request struct {
	// Model is the provider's own model id ("claude-sonnet-5-5"), without the
	// provider prefix.
	Model string
	// System is the system prompt.
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the reply; 0 lets the adapter choose.
	MaxTokens   int64
	Temperature *float64
	Thinking    *Thinking
	// Agent names the agent making the call ("main" for a main session). Real
	// providers ignore it; the scripted model keys its answers by it.
	Agent string
}

// Response is a complete model reply.
type Response struct {
	ID         string     `json:"id"`
	Model      string     `json:"model"`
	Message    Message    `json:"message"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
}

// EventType names a streaming event.
type EventType string

const (
	// EventTextDelta carries a fragment of text in Delta.
	EventTextDelta EventType = "text_delta"
	// EventThinkingDelta carries a fragment of thinking in Delta.
	EventThinkingDelta EventType = "thinking_delta"
	// EventToolUseStart announces a tool call (Name, ID) before its input arrives.
	EventToolUseStart EventType = "tool_use_start"
	// EventRetry says the attempt so far failed and is being retried; Delta
	// holds the reason, and Retry, when a retry policy sent it, the
	// attempt and the wait. Deltas received before it are void.
	EventRetry EventType = "retry"
	// EventDone is the last event of a successful stream; Response is set.
	EventDone EventType = "done"
)

// Event is one item of a model's stream.
type Event struct {
	Type     EventType
	Index    int    // content block index
	Delta    string // text or thinking fragment
	ID, Name string // tool_use start
	Response *Response
	Retry    *Retry // EventRetry from a retry policy
}

// Retry describes a retry about to happen: front ends show its countdown.
type Retry struct {
	// Attempt is the attempt about to start (2 for the first retry) of
	// MaxAttempts; Delay the wait before it.
	Attempt, MaxAttempts int
	Delay                time.Duration
	// Err is the failure retried.
	Err error
}

// Model is a language model that streams. Implementations must honour ctx
// cancellation mid-stream and end a successful stream with EventDone.
// Errors are reported through the iterator, preferably as *Error so callers
// can tell retryable failures apart.
type Model interface {
	// Name is the fully qualified name, "provider:model".
	Name() string
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// Collect drains a stream and returns its final response.
func Collect(stream iter.Seq2[Event, error]) (*Response, error) {
	var resp *Response
	for ev, err := range stream {
		if err != nil {
			return nil, err
		}
		if ev.Type == EventDone {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, &Error{Kind: ErrStreamCut, Message: "stream ended without a complete message"}
	}
	return resp, nil
}
