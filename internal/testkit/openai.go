package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// OpenAIServer is a fake OpenAI Chat Completions API
// (POST /v1/chat/completions) on 127.0.0.1. It answers each request with the
// Reply its Handler chooses: as server-sent chat.completion.chunk events when
// the request says "stream": true, shaped as the real API and the common
// compatible servers (vLLM, llama.cpp, DeepSeek) send them, and as one
// chat.completion object otherwise.
//
// A streamed reply is, in order: a chunk whose delta carries the role; the
// thinking as several reasoning_content deltas; the text as several content
// deltas; for each tool call a delta carrying its index, id, type and name,
// then its arguments in several pieces; a chunk carrying finish_reason; if
// the request set stream_options.include_usage, a chunk with no choices and
// the usage; and "data: [DONE]".
//
// Fault injection, beyond what Reply documents:
//   - Status on a streaming request together with CutAfter > 0 starts the
//     stream normally (HTTP 200) and, after CutAfter chunks, sends a
//     "data: {"error": …}" event and ends the body, as servers report a
//     failure that happens mid-stream.
//   - CutAfter counts data lines other than [DONE]; a CutAfter larger than
//     the stream writes every chunk and then cuts instead of sending [DONE].
//   - CutAfter on a non-streaming request writes half of the JSON body and
//     then cuts the connection.
type OpenAIServer struct {
	// URL is the base URL ending in "/v1", as users write OPENAI_BASE_URL.
	URL string

	fake
}

// NewOpenAI starts a fake OpenAI server that answers with h. It is closed
// when the test ends.
func NewOpenAI(t testing.TB, h Handler) *OpenAIServer {
	t.Helper()
	s := &OpenAIServer{}
	s.URL = s.start(t, h, s.serve) + "/v1"
	return s
}

// Requests returns a copy of the requests the server has received, in
// arrival order.
func (s *OpenAIServer) Requests() []Request { return s.rec.Requests() }

// openAIRequest is the part of a chat completion request the server reads.
type openAIRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// openAIRefuse answers a request the server does not serve.
func openAIRefuse(w http.ResponseWriter, status int, msg string) {
	code := ""
	if status == http.StatusNotFound {
		code = "unknown_url"
	}
	writeError(w, status, openAIErrorBody("invalid_request_error", code, msg))
}

func (s *OpenAIServer) serve(w http.ResponseWriter, r *http.Request) {
	var in openAIRequest
	// answer runs after serve has decoded the body into in.
	s.fake.serve(w, r, route{name: "OpenAI", path: "/v1/chat/completions", refuse: openAIRefuse}, &in, func(reply Reply) {
		s.answer(w, reply, in, func() { s.hold(r) })
	})
}

// answer writes reply; hold blocks until the client hangs up or the test
// ends, for a reply that stalls.
func (s *OpenAIServer) answer(w http.ResponseWriter, reply Reply, in openAIRequest, hold func()) {
	n := s.ids.Add(1)
	w.Header().Set("x-request-id", fmt.Sprintf("req_testkit%06d", n))

	failing := wantsError(reply)
	if failing && !(in.Stream && reply.CutAfter > 0) {
		typ, code := openAIErrorTypeCode(reply)
		writeError(w, reply.Status, openAIErrorBody(typ, code, errorMessage(reply)))
		return
	}
	model := in.Model
	if reply.Model != "" {
		model = reply.Model
	}
	c := openAICompletion{
		id:      fmt.Sprintf("chatcmpl-testkit%06d", n),
		created: time.Now().Unix(),
		model:   model,
		reply:   reply,
		calls:   openAIToolCalls(reply, n),
	}
	if !in.Stream {
		b, err := json.Marshal(c.message())
		if err != nil {
			writeError(w, http.StatusInternalServerError, openAIErrorBody("server_error", "", "testkit: "+err.Error()))
			return
		}
		writeJSON(w, b, reply.CutAfter > 0)
		return
	}
	includeUsage := in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	out := startSSE(w)
	for _, chunk := range c.chunks(includeUsage) {
		if out.stalls(reply) {
			out.stall(hold)
			return
		}
		if out.full(reply.CutAfter) {
			break
		}
		out.event("", chunk)
	}
	if out.stalls(reply) {
		out.stall(hold)
		return
	}
	switch {
	case failing:
		typ, code := openAIErrorTypeCode(reply)
		out.event("", openAIErrorBody(typ, code, errorMessage(reply)))
	case reply.CutAfter > 0:
		out.cut()
	default:
		out.raw("", "[DONE]")
	}
}

// openAICompletion is one reply being rendered.
type openAICompletion struct {
	id      string
	created int64
	model   string
	reply   Reply
	calls   []openAIToolCall
}

type openAIToolCall struct {
	id, name, args string
}

func openAIToolCalls(r Reply, n int64) []openAIToolCall {
	var calls []openAIToolCall
	for j, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_testkit%06d%02d", n, j)
		}
		calls = append(calls, openAIToolCall{id: id, name: c.Name, args: c.InputJSON()})
	}
	return calls
}

// finishReason maps the Reply's Anthropic-worded stop reason onto OpenAI's
// finish_reason; values with no Anthropic counterpart (for example
// "content_filter") pass through so tests can inject them.
func (c openAICompletion) finishReason() string {
	switch c.reply.StopReason {
	case "":
		if len(c.calls) > 0 {
			return "tool_calls"
		}
		return "stop"
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return c.reply.StopReason
}

// usage is the usage object; prompt_tokens includes cached tokens, as in the
// real API.
func (c openAICompletion) usage() map[string]any {
	u := c.reply.Usage
	prompt := u.InputTokens + u.CacheReadInputTokens
	return map[string]any{
		"prompt_tokens":     prompt,
		"completion_tokens": u.OutputTokens,
		"total_tokens":      prompt + u.OutputTokens,
		"prompt_tokens_details": map[string]any{
			"cached_tokens": u.CacheReadInputTokens,
			"audio_tokens":  0,
		},
		"completion_tokens_details": map[string]any{
			"reasoning_tokens":           0,
			"audio_tokens":               0,
			"accepted_prediction_tokens": 0,
			"rejected_prediction_tokens": 0,
		},
	}
}

// message renders the non-streamed chat.completion object.
func (c openAICompletion) message() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if c.reply.Text != "" {
		msg["content"] = c.reply.Text
	}
	if c.reply.Thinking != "" {
		msg["reasoning_content"] = c.reply.Thinking
	}
	if len(c.calls) > 0 {
		var calls []map[string]any
		for _, tc := range c.calls {
			calls = append(calls, map[string]any{
				"id":       tc.id,
				"type":     "function",
				"function": map[string]any{"name": tc.name, "arguments": tc.args},
			})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id":      c.id,
		"object":  "chat.completion",
		"created": c.created,
		"model":   c.model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": c.finishReason(),
		}},
		"usage":              c.usage(),
		"system_fingerprint": "fp_testkit",
	}
}

// chunks renders the streamed reply, without the final [DONE].
func (c openAICompletion) chunks(includeUsage bool) []map[string]any {
	chunk := func(delta map[string]any, finish any) map[string]any {
		ch := map[string]any{
			"id":                 c.id,
			"object":             "chat.completion.chunk",
			"created":            c.created,
			"model":              c.model,
			"system_fingerprint": "fp_testkit",
			"choices": []map[string]any{{
				"index":         0,
				"delta":         delta,
				"logprobs":      nil,
				"finish_reason": finish,
			}},
		}
		// The real API sends "usage": null on every chunk when usage was
		// asked for, and the numbers only on the last one.
		if includeUsage {
			ch["usage"] = nil
		}
		return ch
	}
	out := []map[string]any{chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)}
	for _, part := range split(c.reply.Thinking, c.reply.DeltaSize) {
		out = append(out, chunk(map[string]any{"reasoning_content": part}, nil))
	}
	for _, part := range split(c.reply.Text, c.reply.DeltaSize) {
		out = append(out, chunk(map[string]any{"content": part}, nil))
	}
	for j, tc := range c.calls {
		out = append(out, chunk(map[string]any{"tool_calls": []map[string]any{{
			"index":    j,
			"id":       tc.id,
			"type":     "function",
			"function": map[string]any{"name": tc.name, "arguments": ""},
		}}}, nil))
		for _, part := range split(tc.args, c.reply.DeltaSize) {
			out = append(out, chunk(map[string]any{"tool_calls": []map[string]any{{
				"index":    j,
				"function": map[string]any{"arguments": part},
			}}}, nil))
		}
	}
	out = append(out, chunk(map[string]any{}, c.finishReason()))
	if includeUsage {
		out = append(out, map[string]any{
			"id":                 c.id,
			"object":             "chat.completion.chunk",
			"created":            c.created,
			"model":              c.model,
			"system_fingerprint": "fp_testkit",
			"choices":            []any{},
			"usage":              c.usage(),
		})
	}
	return out
}

// openAIErrorTypeCode gives the error type and code the real API uses for
// r.Status; Reply.ErrorType overrides the type.
func openAIErrorTypeCode(r Reply) (typ, code string) {
	switch s := r.Status; {
	case s == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case s >= 500:
		typ = "server_error"
	case s == http.StatusUnauthorized:
		typ, code = "invalid_request_error", "invalid_api_key"
	case s == http.StatusNotFound:
		typ, code = "invalid_request_error", "model_not_found"
	default:
		typ = "invalid_request_error"
	}
	if r.ErrorType != "" {
		typ = r.ErrorType
	}
	return typ, code
}

// openAIErrorBody is the API's error object; code is null when empty.
func openAIErrorBody(typ, code, msg string) map[string]any {
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}
