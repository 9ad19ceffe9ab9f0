package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/cadre-dev/cadre/llm"
)

// errorf wraps err as an *llm.Error of the given kind.
func (m *Model) errorf(kind llm.ErrorKind, err error) *llm.Error {
	return &llm.Error{Kind: kind, Provider: m.provider, Message: err.Error(), Err: err}
}

// cancelled is the error of a stream whose context ended: not an *llm.Error,
// since nothing went wrong with the provider.
func (m *Model) cancelled(ctx context.Context, chunks int) error {
	return fmt.Errorf("%s: stream cancelled after %d chunks: %w", m.Name(), chunks, ctx.Err())
}

// streamError classifies a failure of the request or the stream. httpResp is
// the response the SDK received, nil if none came; chunks is how many chunks
// had been decoded.
//
// Choices the API leaves open (the same as the Anthropic adapter's):
//   - an error event inside a 200 stream is classified by its code or type
//     and has Status 0, since the HTTP exchange itself succeeded;
//   - no response at all (connection refused, reset, DNS) is ErrServer with
//     Status 0: a local server may be restarting, so it is worth a retry;
//   - a chunk that is not JSON is ErrServer; a body that breaks off after the
//     response started is ErrStreamCut.
func (m *Model) streamError(err error, httpResp *http.Response, chunks int) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		e := &llm.Error{
			Kind:     llm.KindForStatus(apiErr.StatusCode),
			Provider: m.provider,
			Status:   apiErr.StatusCode,
			Message:  apiErr.Message,
			Err:      err,
		}
		if e.Message == "" && apiErr.Response != nil {
			// Not OpenAI's {"error": {...}} shape (vLLM's {"message": ...},
			// Ollama's {"error": "text"}, a proxy's plain text): the SDK
			// leaves the body readable.
			e.Message = bodyMessage(apiErr.Response)
		}
		if e.Message == "" {
			e.Message = statusText(apiErr.StatusCode)
		}
		if apiErr.Code != "" {
			e.Message += " (" + apiErr.Code + ")"
		}
		// A spent quota is a 429 that no wait will cure.
		if apiErr.Code == "insufficient_quota" || apiErr.Type == "insufficient_quota" {
			e.Kind = llm.ErrOther
		}
		if apiErr.Response != nil {
			e.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		return e
	}
	if httpResp != nil && httpResp.StatusCode >= 400 {
		// The SDK could not read the error body as {"error": {...}}, as
		// with Ollama's {"error": "text"} or vLLM's {"message": ...}.
		return &llm.Error{
			Kind:       llm.KindForStatus(httpResp.StatusCode),
			Provider:   m.provider,
			Status:     httpResp.StatusCode,
			RetryAfter: retryAfter(httpResp.Header),
			Message:    bodyMessage(httpResp),
			Err:        err,
		}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		kind, msg := midStreamError(streamErr.Event.Data)
		return &llm.Error{Kind: kind, Provider: m.provider, Message: fmt.Sprintf("error event after %d chunks: %s", chunks, msg), Err: err}
	}
	if httpResp == nil {
		return &llm.Error{Kind: llm.ErrServer, Provider: m.provider, Message: "cannot reach the server: " + err.Error(), Err: err}
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return &llm.Error{Kind: llm.ErrServer, Provider: m.provider, Message: fmt.Sprintf("malformed chunk after %d chunks: %v", chunks, err), Err: err}
	}
	return &llm.Error{Kind: llm.ErrStreamCut, Provider: m.provider,
		Message: fmt.Sprintf("stream cut after %d chunks: %v", chunks, err), Err: err}
}

// bodyMessage extracts an error message from an error response's body,
// which the SDK has left readable.
func bodyMessage(resp *http.Response) string {
	if resp.Body == nil {
		return statusText(resp.StatusCode)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var obj struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal(b, &obj) == nil {
		if s, ok := obj.Error.(string); ok && s != "" {
			return s
		}
		if obj.Message != "" {
			return obj.Message
		}
		if s, ok := obj.Detail.(string); ok && s != "" {
			return s
		}
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return statusText(resp.StatusCode)
}

// midStreamError classifies an error event sent inside a 200 stream, shaped
// {"error": {"message", "type", "code"}} (OpenAI; vLLM puts the HTTP status
// in code) or {"error": "text"}.
func midStreamError(data []byte) (llm.ErrorKind, string) {
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(data, &ev)
	var text string
	if json.Unmarshal(ev.Error, &text) == nil && text != "" {
		return llm.ErrServer, text
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(ev.Error, &obj) != nil {
		return llm.ErrServer, strings.TrimSpace(string(data))
	}
	msg := obj.Message
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	if code, ok := obj.Code.(float64); ok && code >= 400 {
		return llm.KindForStatus(int(code)), msg
	}
	label := strings.ToLower(obj.Type + " " + fmt.Sprint(obj.Code))
	switch {
	case strings.Contains(label, "rate_limit"):
		return llm.ErrRateLimit, msg
	case strings.Contains(label, "overloaded"):
		return llm.ErrOverloaded, msg
	}
	// A failure after the server accepted the request is the server's.
	return llm.ErrServer, msg
}

// retryAfter reads the server's requested wait: retry-after-ms
// (milliseconds, OpenAI) or retry-after (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "HTTP " + strconv.Itoa(status)
}
