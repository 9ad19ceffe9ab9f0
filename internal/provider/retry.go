package provider

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// RetryPolicy says how transient provider failures (429, 5xx, overloaded,
// cut streams) are retried. The zero value gives the defaults.
type RetryPolicy struct {
	MaxAttempts int           // total attempts; default 5
	BaseDelay   time.Duration // first backoff; default 1s, doubling
	MaxDelay    time.Duration // backoff cap; default 30s
	// MaxRetryAfter caps how long a server's retry-after is honoured;
	// longer requests fail at once rather than hang. Default 2 minutes.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx ends; tests replace it. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

// delay is the wait before attempt n+1 (n counts from 0).
func (p RetryPolicy) delay(n int, err error) (time.Duration, bool) {
	var e *llm.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, e.RetryAfter <= p.MaxRetryAfter
	}
	d := p.BaseDelay << n
	if d > p.MaxDelay || d <= 0 {
		d = p.MaxDelay
	}
	// Jitter in [d/2, d) so that many clients hit by one outage spread out.
	return d/2 + rand.N(d/2+1), true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type retrying struct {
	llm.Model
	p RetryPolicy
}

// WithRetry wraps m so that retryable failures are retried with backoff and
// jitter, honouring the server's retry-after. A failed attempt's partial
// stream is announced void with an EventRetry before the next attempt.
func WithRetry(m llm.Model, p RetryPolicy) llm.Model {
	return &retrying{Model: m, p: p.withDefaults()}
}

func (r *retrying) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for attempt := 0; ; attempt++ {
			var failed error
			for ev, err := range r.Model.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if ctx.Err() != nil || !llm.Retryable(failed) || attempt+1 >= r.p.MaxAttempts {
				if llm.Retryable(failed) && attempt > 0 {
					failed = fmt.Errorf("gave up after %d attempts: %w", attempt+1, failed)
				}
				yield(llm.Event{}, failed)
				return
			}
			d, ok := r.p.delay(attempt, failed)
			if !ok {
				yield(llm.Event{}, fmt.Errorf("server asked to retry after %s, longer than the %s cadre waits: %w", d, r.p.MaxRetryAfter, failed))
				return
			}
			retry := &llm.Retry{Attempt: attempt + 2, MaxAttempts: r.p.MaxAttempts, Delay: d, Err: failed}
			if !yield(llm.Event{Type: llm.EventRetry, Retry: retry, Delta: fmt.Sprintf("%v; retrying in %s (attempt %d of %d)", failed, d.Round(time.Millisecond), attempt+2, r.p.MaxAttempts)}, nil) {
				return
			}
			if err := r.p.Sleep(ctx, d); err != nil {
				yield(llm.Event{}, fmt.Errorf("waiting to retry: %w", err))
				return
			}
		}
	}
}
