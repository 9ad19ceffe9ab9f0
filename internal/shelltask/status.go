package shelltask

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/task"
)

// Tail is how much of a shell's output its notification and record carry.
const Tail = 4000

// ReadLimit is how much of a shell's output a reader shows at most, Bash's
// own output limit.
const ReadLimit = 30000

// Agent is what listings show as a shell task's agent.
const Agent = "shell"

// Status is the task status and error of a command that ended so, its
// run's context having ended for cause (nil if it did not).
func Status(end builtin.ShellEnd, cause error) (task.Status, string) {
	switch {
	case end.TimedOut:
		return task.StatusTimeout, "timed out and was killed, with every process it started"
	case cause != nil:
		// TaskStop, or the end of the session that started it.
		return task.StatusKilled, "stopped: " + cause.Error()
	case end.Err != nil:
		return task.StatusFailed, end.Err.Error()
	case end.ExitCode == 0:
		return task.StatusCompleted, ""
	}
	return task.StatusFailed, end.Status
}

// ExitCode reads the exit code of an ended shell task from its record: 0
// when it completed, N for an error "exit code N"; ok is false when it did
// not exit by itself (stopped, timed out, killed by a signal).
func ExitCode(rec task.Task) (code int, ok bool) {
	if rec.Status == task.StatusCompleted {
		return 0, true
	}
	if rec.Status != task.StatusFailed {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rec.Error, "exit code "))
	if err != nil || !strings.HasPrefix(rec.Error, "exit code ") {
		return 0, false
	}
	return n, true
}

// Summary says how a command ended, in a sentence.
func Summary(description string, rec task.Task) string {
	var how string
	code, exited := ExitCode(rec)
	switch {
	case exited && code == 0:
		how = "completed (exit code 0)"
	case exited:
		how = fmt.Sprintf("failed with exit code %d", code)
	case rec.Status == task.StatusKilled:
		how = "was stopped"
	case rec.Status == task.StatusTimeout:
		how = "timed out and was killed"
	default:
		how = "failed: " + rec.Error
	}
	return fmt.Sprintf("Background command %q %s", description, how)
}

// Filter compiles BashOutput's filter ("" for none).
func Filter(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("filter is not a valid regular expression (RE2 syntax): %w", err)
	}
	return re, nil
}
