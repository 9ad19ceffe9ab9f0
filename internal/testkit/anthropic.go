package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// AnthropicServer is a fake Anthropic Messages API (POST /v1/messages) on
// 127.0.0.1. It answers each request with the Reply its Handler chooses,
// streaming it as server-sent events exactly as the real API does when the
// request asks for "stream": true, and as one JSON message otherwise.
//
// Fault injection, beyond what Reply documents:
//   - Status on a streaming request together with CutAfter > 0 starts the
//     stream normally (HTTP 200) and, after CutAfter events, sends an SSE
//     "error" event of that status's error type and ends the stream: this is
//     how the real API reports an overload that happens mid-message.
//   - CutAfter larger than the stream writes every event but message_stop
//     before cutting, so a cut stream never looks complete.
//   - CutAfter on a non-streaming request writes half of the JSON body and
//     then cuts the connection.
type AnthropicServer struct {
	// URL is the base URL, without a trailing slash; the SDK appends
	// "/v1/messages".
	URL string

	fake
}

// NewAnthropic starts a fake Anthropic server that answers with h. It is
// closed when the test ends.
func NewAnthropic(t testing.TB, h Handler) *AnthropicServer {
	t.Helper()
	s := &AnthropicServer{}
	s.URL = s.start(t, h, s.serve)
	return s
}

// Requests returns a copy of the requests the server has received, in
// arrival order.
func (s *AnthropicServer) Requests() []Request { return s.rec.Requests() }

// anthropicRefuse answers a request the server does not serve.
func anthropicRefuse(w http.ResponseWriter, status int, msg string) {
	writeError(w, status, anthropicErrorBody(anthropicErrorType(Reply{Status: status}), msg))
}

func (s *AnthropicServer) serve(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	// answer runs after serve has decoded the body into in.
	s.fake.serve(w, r, route{name: "Anthropic", path: "/v1/messages", refuse: anthropicRefuse}, &in, func(reply Reply) {
		s.answer(w, reply, in.Model, in.Stream, func() { s.hold(r) })
	})
}

// answer writes reply; hold blocks until the client hangs up or the test
// ends, for a reply that stalls.
func (s *AnthropicServer) answer(w http.ResponseWriter, reply Reply, model string, stream bool, hold func()) {
	w.Header().Set("request-id", fmt.Sprintf("req_testkit%06d", s.ids.Add(1)))

	failing := wantsError(reply)
	if failing && !(stream && reply.CutAfter > 0) {
		writeError(w, reply.Status, anthropicErrorBody(anthropicErrorType(reply), anthropicErrorMessage(reply)))
		return
	}
	if reply.Model != "" {
		model = reply.Model
	}
	msg := s.message(reply, model)
	if !stream {
		b, err := json.Marshal(msg)
		if err != nil {
			writeError(w, http.StatusInternalServerError, anthropicErrorBody("api_error", "testkit: "+err.Error()))
			return
		}
		writeJSON(w, b, reply.CutAfter > 0)
		return
	}
	events := anthropicEvents(msg, reply)
	out := startSSE(w)
	// A cut stream stops before message_stop at the latest, so it never
	// looks complete.
	last := len(events) - 1
	for _, ev := range events[:last] {
		if out.stalls(reply) {
			out.stall(hold)
			return
		}
		if out.full(reply.CutAfter) {
			break
		}
		out.event(ev.name, ev.data)
	}
	if out.stalls(reply) {
		out.stall(hold)
		return
	}
	switch {
	case reply.CutAfter == 0:
		out.event(events[last].name, events[last].data)
	case failing:
		out.event("error", anthropicErrorBody(anthropicErrorType(reply), anthropicErrorMessage(reply)))
	default:
		out.cut()
	}
}

// anthropicMessage is the Messages API's message object.
type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        map[string]int64 `json:"usage"`
}

func (s *AnthropicServer) message(r Reply, model string) anthropicMessage {
	n := s.ids.Add(1)
	var content []map[string]any
	if r.Thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": anthropicSignature(r.Thinking)})
	}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	for j, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_testkit%06d%02d", n, j)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": json.RawMessage(c.InputJSON())})
	}
	if content == nil {
		content = []map[string]any{}
	}
	stop := r.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	return anthropicMessage{
		ID:         fmt.Sprintf("msg_testkit%06d", n),
		Type:       "message",
		Role:       "assistant",
		Model:      model,
		Content:    content,
		StopReason: &stop,
		Usage: map[string]int64{
			"input_tokens":                r.Usage.InputTokens,
			"output_tokens":               r.Usage.OutputTokens,
			"cache_creation_input_tokens": r.Usage.CacheCreationInputTokens,
			"cache_read_input_tokens":     r.Usage.CacheReadInputTokens,
		},
	}
}

type anthropicSSEEvent struct {
	name string
	data any
}

// anthropicEvents renders msg as the event sequence of a streamed reply.
func anthropicEvents(msg anthropicMessage, r Reply) []anthropicSSEEvent {
	start := msg
	start.Content = []map[string]any{}
	start.StopReason = nil
	start.Usage = map[string]int64{
		"input_tokens":                r.Usage.InputTokens,
		"cache_creation_input_tokens": r.Usage.CacheCreationInputTokens,
		"cache_read_input_tokens":     r.Usage.CacheReadInputTokens,
		"output_tokens":               1,
	}
	evs := []anthropicSSEEvent{
		{"message_start", map[string]any{"type": "message_start", "message": start}},
		{"ping", map[string]any{"type": "ping"}},
	}
	delta := func(i int, d map[string]any) anthropicSSEEvent {
		return anthropicSSEEvent{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}}
	}
	for i, b := range msg.Content {
		switch b["type"] {
		case "thinking":
			evs = append(evs, anthropicSSEEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}})
			for _, part := range split(b["thinking"].(string), r.DeltaSize) {
				evs = append(evs, delta(i, map[string]any{"type": "thinking_delta", "thinking": part}))
			}
			evs = append(evs, delta(i, map[string]any{"type": "signature_delta", "signature": b["signature"]}))
		case "text":
			evs = append(evs, anthropicSSEEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}})
			for _, part := range split(b["text"].(string), r.DeltaSize) {
				evs = append(evs, delta(i, map[string]any{"type": "text_delta", "text": part}))
			}
		case "tool_use":
			evs = append(evs, anthropicSSEEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}}})
			// The real API opens every tool input with an empty fragment.
			evs = append(evs, delta(i, map[string]any{"type": "input_json_delta", "partial_json": ""}))
			for _, part := range split(string(b["input"].(json.RawMessage)), r.DeltaSize) {
				evs = append(evs, delta(i, map[string]any{"type": "input_json_delta", "partial_json": part}))
			}
		}
		evs = append(evs, anthropicSSEEvent{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
	}
	evs = append(evs,
		anthropicSSEEvent{"message_delta", map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": *msg.StopReason, "stop_sequence": nil},
			"usage": map[string]int64{"output_tokens": r.Usage.OutputTokens},
		}},
		anthropicSSEEvent{"message_stop", map[string]any{"type": "message_stop"}},
	)
	return evs
}

// anthropicSignature stands in for the API's opaque signature; it is
// deterministic so a test can tell whether a client sent it back unchanged.
func anthropicSignature(thinking string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(thinking); i++ {
		h ^= uint64(thinking[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("EqsigTestkit%016x==", h)
}

func anthropicErrorType(r Reply) string {
	if r.ErrorType != "" {
		return r.ErrorType
	}
	switch s := r.Status; {
	case s == http.StatusTooManyRequests:
		return "rate_limit_error"
	case s == 529:
		return "overloaded_error"
	case s >= 500:
		return "api_error"
	case s == http.StatusUnauthorized:
		return "authentication_error"
	case s == http.StatusForbidden:
		return "permission_error"
	case s == http.StatusNotFound:
		return "not_found_error"
	case s == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	}
	return "invalid_request_error"
}

func anthropicErrorMessage(r Reply) string {
	if r.ErrorMessage == "" && r.Status == 529 {
		return "Overloaded"
	}
	return errorMessage(r)
}

func anthropicErrorBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
