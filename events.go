package cadre

import (
	"github.com/cadre-dev/cadre/event"
)

// The stream's vocabulary lives in the public event package, which the
// runtime's event bus shares (docs/sdk.md, "Vocabulary packages"); these
// aliases are the same types under the SDK's names.
type (
	// Event is one message of a session's stream: system (init, the
	// task_* events of background subagents, compaction), an assistant or
	// user message (a subagent's too, tagged with ParentToolUseID), or
	// the result. Type and Subtype say which; the matching field holds
	// the payload.
	Event = event.Event
	// EventType is the kind of an Event, as stream-json's "type" names it.
	EventType = event.EventType
	// TeamTaskChange is what a TaskCreate or TaskUpdate did to a team's
	// task list.
	TeamTaskChange = event.TeamTaskChange
	// TeamTaskRef is a task of a team's list as a change names it.
	TeamTaskRef = event.TeamTaskRef
	// RetryInfo is a model call about to be retried.
	RetryInfo = event.RetryInfo
	// InitInfo is the first event of a run: what the main agent works with.
	InitInfo = event.InitInfo
	// MCPServerStatus is an MCP server's name and status on the init event.
	MCPServerStatus = event.MCPServerStatus
	// AssistantInfo is the metadata of a model reply.
	AssistantInfo = event.AssistantInfo
	// TaskEvent is the payload of the task_* events of a background run.
	TaskEvent = event.TaskEvent
	// TaskUsage is what a background run has used so far.
	TaskUsage = event.TaskUsage
	// CompactInfo describes a compaction.
	CompactInfo = event.CompactInfo
	// ResultInfo is the outcome of a run (the last event).
	ResultInfo = event.ResultInfo
	// PermissionDenial is a tool call the permission layer refused.
	PermissionDenial = event.PermissionDenial
	// ModelUsage is one model's share of a run.
	ModelUsage = event.ModelUsage
	// Refusal is a call refused before anyone was asked.
	Refusal = event.Refusal
	// Todo is one item of an agent's to-do list (the TodoWrite tool).
	Todo = event.Todo
	// SubagentCost is one subagent run's share of what a conversation
	// spent: what a result's Subagents lists.
	SubagentCost = event.SubagentCost
	// PermissionMode says what a session may do without asking.
	PermissionMode = event.PermissionMode
)

// Event types.
const (
	EventSystem      = event.EventSystem
	EventAssistant   = event.EventAssistant
	EventUser        = event.EventUser
	EventResult      = event.EventResult
	EventStreamEvent = event.EventStreamEvent
)

// Subtypes of system events.
const (
	SubtypeInit             = event.SubtypeInit
	SubtypeTaskStarted      = event.SubtypeTaskStarted
	SubtypeTaskProgress     = event.SubtypeTaskProgress
	SubtypeTaskNotification = event.SubtypeTaskNotification
	SubtypeCompactBoundary  = event.SubtypeCompactBoundary
	SubtypeAPIRetry         = event.SubtypeAPIRetry
	SubtypeTeamTask         = event.SubtypeTeamTask
)

// Subtypes of result events, as Claude Code names them.
const (
	ResultSuccess         = event.ResultSuccess
	ResultMaxTurns        = event.ResultMaxTurns
	ResultMaxBudgetUSD    = event.ResultMaxBudgetUSD
	ResultDuringExecution = event.ResultDuringExecution
)

// Permission modes.
const (
	PermissionDefault     = event.PermissionDefault
	PermissionPlan        = event.PermissionPlan
	PermissionAcceptEdits = event.PermissionAcceptEdits
	PermissionBypass      = event.PermissionBypass
)
