package cadre

import "github.com/cadre-dev/cadre/internal/event"

// Event is one message of a session: system/init, an assistant or user
// message (a subagent's too, tagged with ParentToolUseID), or the result.
type Event = event.Event

// The parts of an Event.
type (
	EventType        = event.Type
	AssistantInfo    = event.Assistant
	InitInfo         = event.Init
	ResultInfo       = event.Result
	PermissionDenial = event.Denial
)

// Event types.
const (
	EventSystem    = event.TypeSystem
	EventAssistant = event.TypeAssistant
	EventUser      = event.TypeUser
	EventResult    = event.TypeResult
)
