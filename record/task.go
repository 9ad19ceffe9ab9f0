package record

// TaskStatus is where a background task is in its lifecycle: pending,
// running, then one of the terminal statuses.
type TaskStatus string

// Task statuses.
const (
	TaskPending   TaskStatus = "pending"   // waiting for a slot in its lane
	TaskRunning   TaskStatus = "running"   // executing
	TaskCompleted TaskStatus = "completed" // finished normally
	TaskFailed    TaskStatus = "failed"    // ended by an error, or its process died
	TaskKilled    TaskStatus = "killed"    // stopped (StopTask, TaskStop, a stop of its tree)
	TaskTimeout   TaskStatus = "timeout"   // stopped by its time limit
)

// Terminal reports whether the run is over and its result recorded.
func (s TaskStatus) Terminal() bool {
	switch s {
	case TaskCompleted, TaskFailed, TaskKilled, TaskTimeout:
		return true
	}
	return false
}

// Valid reports whether s is one of the defined statuses.
func (s TaskStatus) Valid() bool {
	return s == TaskPending || s == TaskRunning || s.Terminal()
}

// TaskKind is what a task runs.
type TaskKind string

// Task kinds.
const (
	TaskLocalAgent  TaskKind = "local_agent"  // a subagent run by a cadre process
	TaskLocalBash   TaskKind = "local_bash"   // a background shell command
	TaskRemoteAgent TaskKind = "remote_agent" // a run on a remote agent (A2A), not tied to a local process
)

// Valid reports whether k is one of the defined kinds.
func (k TaskKind) Valid() bool {
	switch k {
	case TaskLocalAgent, TaskLocalBash, TaskRemoteAgent:
		return true
	}
	return false
}
