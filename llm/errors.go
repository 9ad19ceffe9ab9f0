package llm

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a provider failure so the caller can decide whether a
// retry makes sense.
type ErrorKind string

const (
	ErrRateLimit  ErrorKind = "rate_limit"  // 429
	ErrOverloaded ErrorKind = "overloaded"  // 529 or an "overloaded_error" event
	ErrServer     ErrorKind = "server"      // 5xx
	ErrStreamCut  ErrorKind = "stream_cut"  // connection closed mid-message
	ErrTimeout    ErrorKind = "timeout"     // no response, or a stream fell silent
	ErrAuth       ErrorKind = "auth"        // 401/403, or a missing key
	ErrBadRequest ErrorKind = "bad_request" // 400/404/413/422: our request is wrong
	ErrConfig     ErrorKind = "config"      // unknown provider, bad model name
	ErrOther      ErrorKind = "other"
)

// Error is a provider failure.
type Error struct {
	Kind     ErrorKind
	Provider string
	Status   int // HTTP status, 0 if none
	// RetryAfter is the server's requested wait, 0 if it gave none.
	RetryAfter time.Duration
	Message    string
	Err        error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	prefix := e.Provider
	if prefix == "" {
		prefix = "model"
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s (HTTP %d): %s", prefix, e.Kind, e.Status, msg)
	}
	return fmt.Sprintf("%s: %s: %s", prefix, e.Kind, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether err is a transient provider failure worth
// retrying: rate limits, overload, 5xx, cut streams and stalls.
func Retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrStreamCut, ErrTimeout:
		return true
	}
	return false
}

// KindForStatus maps an HTTP status to an ErrorKind.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == 429:
		return ErrRateLimit
	case status == 529:
		return ErrOverloaded
	case status == 408 || status == 409:
		// A request timeout or a lock conflict: worth another try, as the
		// official SDKs treat them.
		return ErrServer
	case status >= 500:
		return ErrServer
	case status == 401 || status == 403:
		return ErrAuth
	case status >= 400:
		return ErrBadRequest
	}
	return ErrOther
}
