package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Reply is one scripted answer of a fake provider server.
type Reply struct {
	Text      string
	Thinking  string
	ToolCalls []ToolCall
	// StopReason in Anthropic's words; empty means "tool_use" when there are
	// tool calls and "end_turn" otherwise. The OpenAI server maps it to a
	// finish_reason.
	StopReason string
	Usage      llm.Usage
	// Model overrides the model name reported; empty echoes the request's.
	Model string

	// Status, if not 0 or 200, makes the server answer with that HTTP status
	// and an error body in the provider's format instead of a stream.
	Status int
	// ErrorType is the provider error type for Status replies (for example
	// "overloaded_error"); a sensible default is chosen from Status.
	ErrorType string
	// ErrorMessage is the error text for Status replies.
	ErrorMessage string
	// Header is added to the response (for example "retry-after": "1").
	Header map[string]string
	// CutAfter, if > 0, closes the connection abruptly after that many SSE
	// events have been written, without the stream's end.
	CutAfter int
	// Wait, if set, is received from before the reply is written; tests use
	// it to hold requests open and prove they overlap.
	Wait <-chan struct{}
	// Stall, if not StallNone, makes the server fall silent at the point
	// it names and hold the connection open, as a provider that hangs
	// does, until the client hangs up or the test ends.
	Stall Stall
	// StallAfter is how many events (SSE events; data chunks for OpenAI) a
	// StallMidStream reply sends before it falls silent; 0 sends the
	// status line and headers only.
	StallAfter int
	// DeltaSize, if > 0, streams the text, thinking and each tool input in
	// deltas of at most that many bytes (on rune boundaries) instead of
	// three pieces, as a real model streams a long reply.
	DeltaSize int
}

// Stall says where a reply falls silent.
type Stall int

const (
	// StallNone answers normally.
	StallNone Stall = iota
	// StallNoResponse never sends even the status line: a request that is
	// accepted and never answered.
	StallNoResponse
	// StallMidStream sends the status line, the headers and
	// Reply.StallAfter events, then nothing.
	StallMidStream
)

// ToolCall is a tool call in a Reply. Input is marshalled to JSON.
type ToolCall struct {
	ID    string
	Name  string
	Input any
}

// InputJSON returns the call's input as JSON text.
func (c ToolCall) InputJSON() string {
	if c.Input == nil {
		return "{}"
	}
	if raw, ok := c.Input.(json.RawMessage); ok {
		return string(raw)
	}
	if s, ok := c.Input.(string); ok {
		return s
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		panic(fmt.Sprintf("testkit: tool call input: %v", err))
	}
	return string(b)
}

// Request is a request a fake server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Start is when the request arrived; End when its reply was finished.
	Start, End time.Time
}

// JSON decodes the body into a generic map.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Handler chooses the reply to a request.
type Handler func(req Request) Reply

// Queue returns a Handler that answers with replies in order, and with an
// HTTP 500 explaining that the script ran out after that.
func Queue(replies ...Reply) Handler {
	var mu sync.Mutex
	i := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(replies) {
			return Reply{Status: 500, ErrorType: "api_error", ErrorMessage: fmt.Sprintf("testkit: no scripted reply left (had %d)", len(replies))}
		}
		r := replies[i]
		i++
		return r
	}
}

// recorder keeps the requests a server saw.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) add(req Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return len(r.reqs) - 1
}

func (r *recorder) finish(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs[i].End = time.Now()
}

// Requests returns a copy of the requests seen so far.
func (r *recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}
