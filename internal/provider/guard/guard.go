// Package guard bounds one model stream, so that no provider — slow,
// broken or hostile — can hang a run or exhaust memory: how long it may take
// to start answering, how long it may fall silent once it has started, and
// how large its reply may grow. Both adapters use it, so both fail alike,
// with errors that name the setting to change.
package guard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Defaults of the Limits fields. A reasoning model may think for minutes
// before its first token, and a local server may have to load the model
// first, so the first-byte limit is generous. Once a stream runs, servers
// send a token or a keep-alive every few seconds; minutes of silence mean
// the connection is dead. Real replies are bounded by the model's output
// tokens (128,000 tokens is under 1 MiB): 8 MiB leaves room for any of them.
const (
	DefaultFirstByte     = 5 * time.Minute
	DefaultIdle          = 3 * time.Minute
	DefaultMaxReplyBytes = 8 << 20
)

// Setting names, for error messages.
const (
	SettingFirstByte     = "limits.streamFirstByteSeconds"
	SettingIdle          = "limits.streamIdleSeconds"
	SettingMaxReplyBytes = "limits.maxReplyBytes"
)

// Limits bound one model stream. Zero fields take the defaults.
type Limits struct {
	// FirstByte bounds the wait from sending the request to the first byte
	// of the response body.
	FirstByte time.Duration
	// Idle bounds each wait for more of the body once it has started. Only
	// time spent waiting on the provider counts: a slow consumer of the
	// stream does not make it idle.
	Idle time.Duration
	// MaxReplyBytes bounds the reply's content (text, thinking, signatures
	// and tool input), in bytes.
	MaxReplyBytes int64
}

// WithDefaults fills in the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.FirstByte <= 0 {
		l.FirstByte = DefaultFirstByte
	}
	if l.Idle <= 0 {
		l.Idle = DefaultIdle
	}
	if l.MaxReplyBytes <= 0 {
		l.MaxReplyBytes = DefaultMaxReplyBytes
	}
	return l
}

// StallError says a stream passed a time limit.
type StallError struct {
	// FirstByte is true when no byte of the response came in time, false
	// when the stream fell silent after it had started.
	FirstByte bool
	Limit     time.Duration
}

func (e *StallError) Error() string {
	if e.FirstByte {
		return fmt.Sprintf("no response within %s of sending the request (%s)", e.Limit, SettingFirstByte)
	}
	return fmt.Sprintf("the stream fell silent for %s (%s)", e.Limit, SettingIdle)
}

// Watch is the watchdog of one stream. Start it before sending the request,
// pass its Middleware with the request, and Stop it when the stream ends.
type Watch struct {
	limits Limits
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	timer    *time.Timer
	deadline time.Time
	started  bool // the first byte of the body has arrived
	reading  bool // a read of the body is waiting on the provider
	err      *StallError
	stopped  bool
}

// Start starts the first-byte clock and returns a context derived from ctx
// that the watch cancels, with a *StallError as its cause, when a limit
// passes. The request must be sent with that context.
func Start(ctx context.Context, l Limits) (context.Context, *Watch) {
	w := &Watch{limits: l.WithDefaults()}
	ctx, w.cancel = context.WithCancelCause(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = time.Now().Add(w.limits.FirstByte)
	w.timer = time.AfterFunc(w.limits.FirstByte, w.fire)
	return ctx, w
}

// Err is the limit that passed, nil if none did.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil // a nil *StallError must not become a non-nil error
	}
	return w.err
}

// Stop ends the watch and cancels its context, releasing the request. It
// is safe to call more than once.
func (w *Watch) Stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// fire runs when the timer goes off: the limit has passed unless the
// deadline moved on meanwhile, or the clock is paused because nobody is
// waiting on the provider.
func (w *Watch) fire() {
	w.mu.Lock()
	if w.stopped || w.err != nil || (w.started && !w.reading) {
		w.mu.Unlock()
		return
	}
	if left := time.Until(w.deadline); left > 0 {
		w.timer.Reset(left)
		w.mu.Unlock()
		return
	}
	limit := w.limits.FirstByte
	if w.started {
		limit = w.limits.Idle
	}
	w.err = &StallError{FirstByte: !w.started, Limit: limit}
	err := w.err
	w.mu.Unlock()
	w.cancel(err)
}

// readStarts is called as a read of the body begins to wait on the
// provider: once the body has started, the idle clock runs from here.
func (w *Watch) readStarts() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = true
	if w.started {
		w.deadline = time.Now().Add(w.limits.Idle)
		// The timer may be set for a later time (the first-byte limit) or
		// not at all (it went off while nobody was reading).
		w.timer.Reset(w.limits.Idle)
	}
}

// readEnds is called when a read of the body returns n bytes.
func (w *Watch) readEnds(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = false
	if n > 0 {
		w.started = true
	}
}

// Middleware is an SDK middleware (both SDKs' option.WithMiddleware take
// this shape) that lets the watch see the response body being read.
func (w *Watch) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &body{ReadCloser: resp.Body, w: w}
	return resp, nil
}

type body struct {
	io.ReadCloser
	w *Watch
}

func (b *body) Read(p []byte) (int, error) {
	b.w.readStarts()
	n, err := b.ReadCloser.Read(p)
	b.w.readEnds(n)
	return n, err
}

// TooLargeError says a reply passed Limits.MaxReplyBytes.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the reply grew past %s of text, thinking and tool input (%s: %d); cadre stopped reading it", Size(e.Limit), SettingMaxReplyBytes, e.Limit)
}

// Budget counts the bytes of one reply's content against MaxReplyBytes.
// It is not safe for concurrent use: one stream is read by one goroutine.
type Budget struct {
	max, used int64
}

// NewBudget returns the budget of one reply under l.
func NewBudget(l Limits) *Budget {
	return &Budget{max: l.WithDefaults().MaxReplyBytes}
}

// Add counts n more bytes; it fails once the total passes the limit.
func (b *Budget) Add(n int) error {
	b.used += int64(n)
	if b.used > b.max {
		return &TooLargeError{Limit: b.max}
	}
	return nil
}

// Size formats n bytes for people: "8 MiB", "1.5 KiB", "300 bytes".
func Size(n int64) string {
	const unit = 1024
	switch {
	case n < unit:
		return fmt.Sprintf("%d bytes", n)
	case n < unit*unit:
		return trimZero(float64(n)/unit) + " KiB"
	case n < unit*unit*unit:
		return trimZero(float64(n)/(unit*unit)) + " MiB"
	}
	return trimZero(float64(n)/(unit*unit*unit)) + " GiB"
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
