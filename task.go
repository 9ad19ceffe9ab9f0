package cadre

import (
	"github.com/cadre-dev/cadre/record"
)

// Task is the record of one background run as SDK users and `cadre tasks
// --json` see it (record.Task).
type Task = record.Task

// TaskStatus is where a task is: pending, running, then one of the
// terminal statuses (Terminal).
type TaskStatus = record.TaskStatus

// Task statuses.
const (
	TaskPending   = record.TaskPending
	TaskRunning   = record.TaskRunning
	TaskCompleted = record.TaskCompleted
	TaskFailed    = record.TaskFailed
	TaskKilled    = record.TaskKilled
	TaskTimeout   = record.TaskTimeout
)

// TaskKind is what a task runs.
type TaskKind = record.TaskKind

// Task kinds.
const (
	TaskLocalAgent  = record.TaskLocalAgent
	TaskLocalBash   = record.TaskLocalBash
	TaskRemoteAgent = record.TaskRemoteAgent
)
