package event

import (
	"time"

	"github.com/cadre-dev/cadre/event"
)

// The subtypes of the system events about background tasks, as Claude
// Code's stream-json names them; their payload is Event.Task.
const (
	SubtypeTaskStarted      = event.SubtypeTaskStarted
	SubtypeTaskProgress     = event.SubtypeTaskProgress
	SubtypeTaskNotification = event.SubtypeTaskNotification
	// SubtypeAPIRetry is a model call about to be retried (Claude Code's
	// api_retry): Fields hold attempt, max_retries, retry_delay_ms,
	// error_status and error.
	SubtypeAPIRetry = event.SubtypeAPIRetry
	// SubtypeTeamTask is a change of a team's task list (cadre's own: no
	// Claude Code line says it); its payload is Event.TeamTask.
	SubtypeTeamTask = event.SubtypeTeamTask
)

// TeamTask is the payload of a team_task_changed event: what a TaskCreate
// or TaskUpdate did to the team's shared task list.
type TeamTask struct {
	Team string // the team's name
	By   string // who changed it: "main" (the lead) or a teammate's name
	// Change is created, updated or deleted; Fields the fields an update
	// changed, in Claude Code's names.
	Change string
	Fields []string
	// From and To are set when the status changed.
	From, To string
	// The task after the change (before it, when deleted).
	ID, Subject, Status, Owner string
	BlockedBy                  []string
	// Unblocked are the tasks this change left free to claim.
	Unblocked []string
}

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
