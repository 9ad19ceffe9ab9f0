package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// Why a run was cancelled decides the status it ends with (StatusOf).
var (
	// ErrStopped is the cause of a stop (TaskStop, a front end's stop, a
	// stop requested through its record): the run ends killed.
	ErrStopped = errors.New("stopped with TaskStop")
	// ErrTimedOut is what a run's time limit is (TimeoutError): the run
	// ends with status timeout.
	ErrTimedOut = errors.New("subagents.runTimeoutSeconds elapsed")
	// ErrSessionStopped is the cause when the session that started the
	// run stops its group: the run ends killed.
	ErrSessionStopped = errors.New("the session that started it was stopped")
)

// TimeoutError ends a run past its time limit; it is an ErrTimedOut, so
// the run ends with status timeout. ByCall says the limit came with the
// call (sessions_spawn's runTimeoutSeconds), not from the settings.
type TimeoutError struct {
	After  time.Duration
	ByCall bool
}

func (e TimeoutError) Error() string {
	if e.ByCall {
		return fmt.Sprintf("runTimeoutSeconds (%s) of sessions_spawn elapsed", e.After)
	}
	return fmt.Sprintf("subagents.runTimeoutSeconds (%s) elapsed", e.After)
}

// Is makes a TimeoutError an ErrTimedOut.
func (e TimeoutError) Is(target error) bool { return target == ErrTimedOut }

// StatusOf maps how a run ended — its result, and the cause its context
// ended with, if it did — to a task status.
func StatusOf(res *runner.Result, cause error) task.Status {
	switch {
	case res.Err == nil:
		return task.StatusCompleted
	case errors.Is(cause, ErrTimedOut):
		return task.StatusTimeout
	case errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded):
		return task.StatusKilled
	}
	return task.StatusFailed
}

// WithTimeout is ctx with a run's time limit: byCall when the call set one
// (sessions_spawn's runTimeoutSeconds), else the settings' seconds (0: no
// limit). Past it, the context ends with a TimeoutError as its cause.
func WithTimeout(ctx context.Context, seconds int, byCall time.Duration) (context.Context, context.CancelFunc) {
	timeout := time.Duration(seconds) * time.Second
	if byCall > 0 {
		timeout = byCall
	}
	if timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, timeout, TimeoutError{After: timeout, ByCall: byCall > 0})
}

// SessionStatus is the status a child session ends with when its run ends
// with status.
func SessionStatus(status task.Status) session.Status {
	switch status {
	case task.StatusKilled:
		return session.StatusKilled
	case task.StatusFailed, task.StatusTimeout:
		return session.StatusFailed
	}
	return session.StatusCompleted
}

// ErrorText is the error a run's end records: its result's, or the cause
// its context ended with when the result's error is not that cause (the
// limit that elapsed, the stop); "" when it succeeded.
func ErrorText(res *runner.Result, cause error) string {
	if res.Err == nil {
		return ""
	}
	if cause != nil && !errors.Is(res.Err, cause) {
		return cause.Error()
	}
	return res.Err.Error()
}
