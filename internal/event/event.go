package event

import (
	"time"

	"github.com/cadre-dev/cadre/event"

	"github.com/cadre-dev/cadre/llm"
)

// Type is the stream-json "type" of an event: the SDK's
// event.EventType, the same type.
type Type = event.EventType

const (
	TypeSystem    = event.EventSystem
	TypeAssistant = event.EventAssistant
	TypeUser      = event.EventUser
	TypeResult    = event.EventResult
	// TypeStreamEvent is a piece of a model reply still streaming (only
	// when partial messages were asked for).
	TypeStreamEvent = event.EventStreamEvent
)

// Result subtypes, as Claude Code names them.
const (
	ResultSuccess         = event.ResultSuccess
	ResultMaxTurns        = event.ResultMaxTurns
	ResultDuringExecution = event.ResultDuringExecution
)

// Event is one message of a session's stream.
type Event struct {
	Type Type
	// Subtype: "init", the task_* kinds (SubtypeTask…) and
	// compact_boundary for system events; the outcome for result events.
	Subtype   string
	SessionID string
	UUID      string
	Time      time.Time

	// ParentToolUseID is "" for the main agent's own messages; for a
	// subagent's, the id of the Agent tool call that started it.
	ParentToolUseID string
	// AgentID, AgentType and TaskDescription identify a subagent's messages.
	AgentID, AgentType, TaskDescription string
	// AgentColor is the subagent's color from its agent file, or "".
	AgentColor string

	// Message is set on assistant and user events.
	Message *llm.Message
	// Assistant is set on assistant events.
	Assistant *Assistant
	// ToolUseResult is structured detail of a tool result (user events).
	ToolUseResult any
	// Refused lists the calls whose results this user event carries that
	// the permission layer refused before asking anyone.
	Refused []Refusal

	Init   *Init
	Result *Result
	// Task is the payload of the task_* system events.
	Task *Task
	// TeamTask is the payload of a team_task_changed system event.
	TeamTask *TeamTask
	// Fields holds the payload of other system subtypes (compact_boundary),
	// written as top-level keys.
	Fields map[string]any
	// Partial is a stream event's payload: one Anthropic Messages API
	// streaming event (message_start, content_block_delta, …).
	Partial map[string]any
}

// The payloads below are the SDK's (package event, public), the same
// types: the bus carries what SDK users get, with nothing to convert.
type (
	// Assistant is the metadata of an assistant message.
	Assistant = event.AssistantInfo
	// Init is the system/init payload.
	Init = event.InitInfo
	// MCPServer is one MCP server on the init line, as Claude Code lists
	// it.
	MCPServer = event.MCPServerStatus
	// Result is the final outcome of a run.
	Result = event.ResultInfo
	// SubagentCost is one subagent run's share of a run tree's spending.
	SubagentCost = event.SubagentCost
	// Refusal is a call the permission layer refused before asking
	// anyone: by a rule, by the mode, or because nobody could be asked.
	Refusal = event.Refusal
	// Denial records a tool call the permission layer refused.
	Denial = event.PermissionDenial
	// ModelUsage is one model's share of a run.
	ModelUsage = event.ModelUsage
)
