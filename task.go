package cadre

import (
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
)

// Task is the record of one background run (a subagent started with
// run_in_background, or moved there, or a Bash command started with
// run_in_background: kind local_bash, agent "shell", its command in
// Prompt), kept in the store that every cadre process sharing the state
// dir sees. Its JSON is `cadre tasks --json`'s.
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
	// Progress is a one-line summary of what a running task is doing.
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
	// Notified is set once the parent agent was told of the end.
	Notified bool `json:"notified"`
	// Archived is set once the child session's transcript was archived.
	Archived bool `json:"archived,omitempty"`
	// CancelRequested is a stop request waiting for the process that runs
	// the task.
	CancelRequested bool `json:"cancel_requested"`

	// Owner is the id of the process running the task; Heartbeat when it
	// last said so.
	Owner     string    `json:"owner"`
	Heartbeat time.Time `json:"heartbeat"`

	Created  time.Time `json:"created"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

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

func taskOf(t task.Task) Task {
	return Task{
		ID: t.ID, Kind: t.Kind, Agent: t.Agent, Name: t.Name, Description: t.Description, Prompt: t.Prompt,
		ParentSessionID: t.ParentSessionID, RootSessionID: t.RootSessionID, ChildSessionID: t.ChildSessionID, ToolUseID: t.ToolUseID,
		Status: t.Status, Result: t.Result, Progress: t.Progress, Error: t.Error,
		Usage: t.Usage, CostUSD: t.CostUSD, ToolUses: t.ToolUses,
		OutputFile: t.OutputFile, Notified: t.Notified, Archived: t.Archived, CancelRequested: t.CancelRequested,
		Owner: t.Owner, Heartbeat: t.Heartbeat, Created: t.Created, Started: t.Started, Finished: t.Finished,
	}
}
