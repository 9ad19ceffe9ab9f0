package record

import (
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Task is the record of one background run (a subagent started with
// run_in_background, or moved there, or a Bash command started with
// run_in_background: kind local_bash, agent "shell", its command in
// Prompt), kept in the store that every cadre process sharing the state
// dir sees: the task store's record itself, which the SDK shows with its
// session's model and turns added (a store leaves those two empty). Its
// JSON is `cadre tasks --json`'s. Stores keep times to the millisecond
// and return them in UTC; a zero time (not started, not finished, no
// heartbeat yet) stays zero.
type Task struct {
	// ID names the run everywhere: for a subagent it is the agent id, which
	// is also its session's id.
	ID          string   `json:"id"`
	Kind        TaskKind `json:"kind"`
	Agent       string   `json:"agent"`          // the agent type (subagent_type)
	Name        string   `json:"name,omitempty"` // the SendMessage name, "" if none
	Description string   `json:"description"`
	Prompt      string   `json:"prompt"`

	ParentSessionID string `json:"parent_session_id"` // the session whose agent launched it
	RootSessionID   string `json:"root_session_id"`   // the main session of the run tree
	ChildSessionID  string `json:"child_session_id"`
	ToolUseID       string `json:"tool_use_id"` // the Agent call that launched it

	Status TaskStatus `json:"status"`
	// Result is the final text, or the partial text of a run that did not
	// complete.
	Result string `json:"result"`
	// Progress is a one-line summary of what a running task is doing,
	// refreshed now and then by a forked summary run.
	Progress string `json:"progress,omitempty"`
	Error    string `json:"error,omitempty"`

	Usage llm.Usage `json:"usage"`
	// CostUSD is null in JSON when the run's model has no known price.
	CostUSD  llm.Cost `json:"cost_usd"`
	ToolUses int      `json:"tool_uses"`
	// Model and NumTurns are its session's: the model it ran on
	// ("provider:model") and its model calls so far.
	Model    string `json:"model,omitempty"`
	NumTurns int    `json:"num_turns"`

	// OutputFile holds the run's progress and, at the end, its result.
	OutputFile string `json:"output_file"`
	// Notified is set once the parent agent was told of the end (a
	// notification, or a blocking TaskOutput that saw it). Exactly one
	// party sets it: a caller of the store's MarkNotified that gets true,
	// or the runtime's transition that records the terminal status and
	// sets it in the same write.
	Notified bool `json:"notified"`
	// Archived is set once the child session's transcript was archived.
	Archived bool `json:"archived,omitempty"`
	// CancelRequested is a stop request waiting for the process that runs
	// the task (TaskStop from another process or node).
	CancelRequested bool `json:"cancel_requested"`

	// RemoteTaskID is, for a remote_agent task, the id the remote A2A
	// server gave its work, recorded as soon as the server names it; ""
	// before that and for every other kind. A cadre started after the
	// process that launched the run follows the remote task by it.
	RemoteTaskID string `json:"remote_task_id,omitempty"`

	// Owner is the id of the process running the task; Heartbeat when it
	// last said so.
	Owner     string    `json:"owner"`
	Heartbeat time.Time `json:"heartbeat"`

	Created  time.Time `json:"created"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

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
