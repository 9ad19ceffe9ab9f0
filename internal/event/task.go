package event

import (
	"github.com/cadre-dev/cadre/event"
)

// The subtypes of the system events about background tasks, as Claude
// Code's stream-json names them; their payload is Event.Task.
const (
	SubtypeTaskStarted      = event.SubtypeTaskStarted
	SubtypeTaskProgress     = event.SubtypeTaskProgress
	SubtypeTaskNotification = event.SubtypeTaskNotification
	// SubtypeAPIRetry is a model call about to be retried (Claude Code's
	// api_retry); its payload is Event.Retry.
	SubtypeAPIRetry = event.SubtypeAPIRetry
	// SubtypeTeamTask is a change of a team's task list (cadre's own: no
	// Claude Code line says it); its payload is Event.TeamTask.
	SubtypeTeamTask = event.SubtypeTeamTask
)

// The payloads of the task_* events (Task) and of team_task_changed
// (TeamTask), the SDK's types.
type (
	// Task is a background run that started (or moved to the
	// background), made progress, or ended and notified its parent;
	// which fields a subtype carries follows Claude Code's stream-json.
	// Usage is nil on task_started.
	Task      = event.TaskEvent
	TaskUsage = event.TaskUsage
	// TeamTask is what a TaskCreate or TaskUpdate did to a team's list.
	TeamTask    = event.TeamTaskChange
	TeamTaskRef = event.TeamTaskRef
)
