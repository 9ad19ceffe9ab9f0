package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

func TestErrorText(t *testing.T) {
	limit := TimeoutError{After: time.Minute}
	failed := errors.New("the model failed")
	cases := []struct {
		name  string
		err   error
		cause error
		want  string
	}{
		{"success", nil, nil, ""},
		{"its own error", failed, nil, "the model failed"},
		{"the cause is the error", limit, limit, limit.Error()},
		// The loop saw only a cancellation; the cause says why.
		{"a cancellation with a cause", context.Canceled, limit, limit.Error()},
		{"a stop", context.Canceled, ErrStopped, ErrStopped.Error()},
	}
	for _, c := range cases {
		res := &runner.Result{Outcome: &loop.Outcome{Err: c.err}}
		if got := ErrorText(res, c.cause); got != c.want {
			t.Errorf("%s: ErrorText = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSessionStatus(t *testing.T) {
	for status, want := range map[task.Status]session.Status{
		task.StatusCompleted: session.StatusCompleted,
		task.StatusKilled:    session.StatusKilled,
		task.StatusFailed:    session.StatusFailed,
		task.StatusTimeout:   session.StatusFailed,
	} {
		if got := SessionStatus(status); got != want {
			t.Errorf("SessionStatus(%s) = %s, want %s", status, got, want)
		}
	}
}

func TestWithTimeout(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), 0, 0)
	cancel()
	if _, ok := ctx.Deadline(); ok || ctx.Err() != nil {
		t.Fatal("no limit set one")
	}
	cases := []struct {
		seconds int
		byCall  time.Duration
		want    TimeoutError
	}{
		{1, 0, TimeoutError{After: time.Second}},
		{3600, time.Nanosecond, TimeoutError{After: time.Nanosecond, ByCall: true}},
		{0, time.Nanosecond, TimeoutError{After: time.Nanosecond, ByCall: true}},
	}
	for _, c := range cases {
		ctx, cancel := WithTimeout(context.Background(), c.seconds, c.byCall)
		deadline, ok := ctx.Deadline()
		if !ok || time.Until(deadline) > c.want.After {
			t.Errorf("WithTimeout(%d, %s): deadline %v (set %v), want within %s", c.seconds, c.byCall, deadline, ok, c.want.After)
		}
		if c.want.After == time.Nanosecond {
			<-ctx.Done()
			var te TimeoutError
			if !errors.As(context.Cause(ctx), &te) || te != c.want || !errors.Is(context.Cause(ctx), ErrTimedOut) {
				t.Errorf("WithTimeout(%d, %s): cause %v, want %v", c.seconds, c.byCall, context.Cause(ctx), c.want)
			}
		}
		cancel()
	}
}
