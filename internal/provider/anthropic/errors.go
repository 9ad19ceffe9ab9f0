package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm"
)

// classify turns a failed call into an *llm.Error. resp is the HTTP
// response, nil when none arrived; events is how many stream events had been
// decoded.
//
// Choices the API leaves open:
//   - an "error" event inside a 200 stream (the API's way of reporting an
//     overload mid-message) is classified by its error type and has Status 0,
//     since the HTTP exchange itself succeeded;
//   - no response at all (connection refused, reset, DNS) is ErrServer with
//     Status 0: the service may be restarting, so it is worth a retry;
//   - a body that breaks off or garbles after the response started is
//     ErrStreamCut.
func classify(err error, resp *http.Response, events int) *llm.Error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		typ := string(apiErr.Type())
		msg := apiMessage(apiErr)
		e := &llm.Error{Provider: provider, Message: msg, Err: err}
		if apiErr.Response != nil {
			e.RetryAfter = retryAfter(apiErr.Response.Header, time.Now())
		}
		if apiErr.StatusCode >= 400 {
			e.Status = apiErr.StatusCode
			e.Kind = llm.KindForStatus(e.Status)
			if typ == "overloaded_error" {
				e.Kind = llm.ErrOverloaded
			}
			return e
		}
		e.Kind = kindForType(typ)
		e.Message = fmt.Sprintf("%s event after %d stream events: %s", orUnknown(typ), events, msg)
		return e
	}
	if resp == nil {
		return &llm.Error{Kind: llm.ErrServer, Provider: provider, Message: "cannot reach the API: " + err.Error(), Err: err}
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return &llm.Error{Kind: llm.ErrServer, Provider: provider, Message: fmt.Sprintf("malformed stream event after %d events: %v", events, err), Err: err}
	}
	return &llm.Error{Kind: llm.ErrStreamCut, Provider: provider,
		Message: fmt.Sprintf("stream cut after %d events; nothing received was kept: %v", events, err), Err: err}
}

// kindForType maps an Anthropic error type, as carried by an SSE error
// event, to a Kind. Unknown types count as server trouble: they arrive
// mid-stream, after the request was accepted.
func kindForType(typ string) llm.ErrorKind {
	switch typ {
	case "overloaded_error":
		return llm.ErrOverloaded
	case "rate_limit_error":
		return llm.ErrRateLimit
	case "authentication_error", "permission_error":
		return llm.ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large":
		return llm.ErrBadRequest
	}
	return llm.ErrServer
}

func orUnknown(typ string) string {
	if typ == "" {
		return "error"
	}
	return typ
}

// apiMessage extracts the provider's own words from an API error, with the
// request id that Anthropic support asks for.
func apiMessage(e *sdk.Error) string {
	raw := e.RawJSON()
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal([]byte(raw), &body) == nil {
		msg = body.Error.Message
	}
	if msg == "" {
		// Not the API's error shape: a proxy's page, say. Keep it short.
		msg = strings.TrimSpace(raw)
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
	}
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if e.RequestID != "" {
		msg += " (request-id " + e.RequestID + ")"
	}
	return msg
}

// retryAfter reads the wait the server asked for: retry-after-ms (which
// Anthropic sends for sub-second precision), else retry-after in seconds or
// as an HTTP date. It returns 0 when there is none or it makes no sense.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && sane(ms/1000) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if sane(s) {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// sane accepts a positive wait of less than a day, in seconds.
func sane(s float64) bool {
	return s > 0 && !math.IsNaN(s) && s < 24*60*60
}
