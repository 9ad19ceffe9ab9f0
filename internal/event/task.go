package event

import "time"

// The subtypes of the system events about background tasks, as Claude
// Code's stream-json names them; their payload is Event.Task.
const (
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskProgress     = "task_progress"
	SubtypeTaskNotification = "task_notification"
	// SubtypeAPIRetry is a model call about to be retried (Claude Code's
	// api_retry): Fields hold attempt, max_retries, retry_delay_ms,
	// error_status and error.
	SubtypeAPIRetry = "api_retry"
)

// Task is the payload of a task_* system event: a background subagent run
// started (or moved to the background), made progress, or ended and
// notified its parent. Which fields a subtype carries follows Claude
// Code's stream-json; the others are zero.
type Task struct {
	// TaskID is the run's task id (its agent id and child session id);
	// ToolUseID the spawn call that started it.
	TaskID    string
	ToolUseID string

	// Description and SubagentType: task_started and task_progress.
	Description  string
	SubagentType string
	// task_started: the prompt, the task kind ("local_agent"), whether the
	// run is in the background (always, for a task) and its spawn depth.
	Prompt       string
	TaskType     string
	Backgrounded bool
	SpawnDepth   int

	// task_progress: the tool the run called last.
	LastToolName string

	// task_notification: how the run ended (its task record's status:
	// completed, failed, killed or timeout; output writes Claude Code's
	// word for it), its output file and a summary: the agent's report
	// when it completed with one (SummaryIsReport), as Claude Code gives
	// it, else a sentence saying how it ended.
	Status          string
	OutputFile      string
	Summary         string
	SummaryIsReport bool

	// Usage: task_progress (so far) and task_notification (in all).
	Usage TaskUsage
}

// TaskUsage is a run's figures.
type TaskUsage struct {
	TotalTokens int64
	ToolUses    int
	Duration    time.Duration
}
