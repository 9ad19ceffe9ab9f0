package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
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

	handler Handler
	rec     recorder
	srv     *httptest.Server
	// closing is closed when the test ends, so handlers parked on Reply.Wait
	// return and httptest.Server.Close, which waits for them, does not hang.
	closing chan struct{}
	ids     atomic.Int64
}

// NewAnthropic starts a fake Anthropic server that answers with h. It is
// closed when the test ends.
func NewAnthropic(t testing.TB, h Handler) *AnthropicServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: listen on 127.0.0.1: %v", err)
	}
	s := &AnthropicServer{handler: h, closing: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.closing)
		s.srv.Close()
	})
	return s
}

// Requests returns a copy of the requests the server has received, in
// arrival order.
func (s *AnthropicServer) Requests() []Request { return s.rec.Requests() }

func (s *AnthropicServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "testkit: reading request body: "+err.Error())
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Start: time.Now()}
	i := s.rec.add(req)
	defer s.rec.finish(i)

	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("testkit: the fake Anthropic server serves only POST /v1/messages, not %s %s", r.Method, r.URL.Path))
		return
	}
	var in struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "testkit: request body is not JSON: "+err.Error())
		return
	}

	reply := s.handler(req)
	if reply.Wait != nil {
		select {
		case <-reply.Wait:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("request-id", fmt.Sprintf("req_testkit%06d", s.ids.Add(1)))

	failing := reply.Status != 0 && reply.Status != http.StatusOK
	if failing && !(in.Stream && reply.CutAfter > 0) {
		writeAnthropicError(w, reply.Status, anthropicErrorType(reply), anthropicErrorMessage(reply))
		return
	}
	model := in.Model
	if reply.Model != "" {
		model = reply.Model
	}
	msg := s.message(reply, model)
	if !in.Stream {
		s.writeJSON(w, reply, msg)
		return
	}
	events := anthropicEvents(msg, reply)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for n, ev := range events {
		if reply.CutAfter > 0 && (n == reply.CutAfter || n == len(events)-1) {
			if failing {
				writeAnthropicSSE(w, "error", anthropicErrorBody(anthropicErrorType(reply), anthropicErrorMessage(reply)))
				anthropicFlush(flusher)
				return
			}
			anthropicCut(w)
			return
		}
		writeAnthropicSSE(w, ev.name, ev.data)
		anthropicFlush(flusher)
	}
}

func (s *AnthropicServer) writeJSON(w http.ResponseWriter, reply Reply, msg anthropicMessage) {
	b, err := json.Marshal(msg)
	if err != nil {
		writeAnthropicError(w, http.StatusInternalServerError, "api_error", "testkit: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.CutAfter > 0 {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:len(b)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		anthropicCut(w)
		return
	}
	_, _ = w.Write(b)
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
			for _, part := range anthropicSplit(b["thinking"].(string)) {
				evs = append(evs, delta(i, map[string]any{"type": "thinking_delta", "thinking": part}))
			}
			evs = append(evs, delta(i, map[string]any{"type": "signature_delta", "signature": b["signature"]}))
		case "text":
			evs = append(evs, anthropicSSEEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}})
			for _, part := range anthropicSplit(b["text"].(string)) {
				evs = append(evs, delta(i, map[string]any{"type": "text_delta", "text": part}))
			}
		case "tool_use":
			evs = append(evs, anthropicSSEEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}}})
			// The real API opens every tool input with an empty fragment.
			evs = append(evs, delta(i, map[string]any{"type": "input_json_delta", "partial_json": ""}))
			for _, part := range anthropicSplit(string(b["input"].(json.RawMessage))) {
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

// split cuts s into up to three pieces on rune boundaries, so that a client
// has to join deltas to get the whole.
func anthropicSplit(s string) []string {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return nil
	}
	size := (n + 2) / 3
	var parts []string
	for len(s) > 0 {
		end, count := 0, 0
		for end < len(s) && count < size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
			count++
		}
		parts = append(parts, s[:end])
		s = s[end:]
	}
	return parts
}

// thinkingSignature stands in for the API's opaque signature; it is
// deterministic so a test can tell whether a client sent it back unchanged.
func anthropicSignature(thinking string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(thinking); i++ {
		h ^= uint64(thinking[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("EqsigTestkit%016x==", h)
}

func writeAnthropicSSE(w io.Writer, name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("testkit: marshal SSE event %s: %v", name, err))
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, b)
	_, _ = w.Write(buf.Bytes())
}

func anthropicFlush(f http.Flusher) {
	if f != nil {
		f.Flush()
	}
}

// cut closes the connection under the response, without the terminating
// chunk, so the client sees the body end unexpectedly.
func anthropicCut(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("testkit: response writer cannot be hijacked to cut the stream")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(fmt.Sprintf("testkit: hijack to cut the stream: %v", err))
	}
	_ = conn.Close()
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
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	if r.Status == 529 {
		return "Overloaded"
	}
	if t := http.StatusText(r.Status); t != "" {
		return t
	}
	return fmt.Sprintf("testkit: HTTP %d", r.Status)
}

func anthropicErrorBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(anthropicErrorBody(typ, msg))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
