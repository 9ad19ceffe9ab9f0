package event

import (
	"github.com/cadre-dev/cadre/event"
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

// Event is one message of a session's stream: the SDK's event.Event, the
// same type. The bus carries what SDK users get, typed payloads included
// (a task's, a team task change's, a compaction's, a retry's); the
// writers of other shapes (stream-json, the web view) read those.
type Event = event.Event

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
	// Compact is a compact_boundary's payload; Retry an api_retry's.
	Compact = event.CompactInfo
	Retry   = event.RetryInfo
)
