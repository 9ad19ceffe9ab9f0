package hook

import (
	"github.com/cadre-dev/cadre/hook"
)

// Event names a hook event, as Claude Code spells it: the SDK's
// hook.Event (public), the same type.
type Event = hook.Event

// The events cadre fires.
const (
	PreToolUse       = hook.PreToolUse
	PostToolUse      = hook.PostToolUse
	UserPromptSubmit = hook.UserPromptSubmit
	Stop             = hook.Stop
	SubagentStart    = hook.SubagentStart
	SubagentStop     = hook.SubagentStop
	PreCompact       = hook.PreCompact
	SessionStart     = hook.SessionStart
	SessionEnd       = hook.SessionEnd
	Notification     = hook.Notification
	// The team events (DESIGN S-A6).
	TaskCreated   = hook.TaskCreated
	TaskCompleted = hook.TaskCompleted
	TeammateIdle  = hook.TeammateIdle
)

// Events lists every event cadre fires, in Claude Code's order.
func Events() []Event {
	return []Event{PreToolUse, PostToolUse, Notification, UserPromptSubmit, SessionStart, SessionEnd, Stop, SubagentStart, SubagentStop, PreCompact, TaskCreated, TaskCompleted, TeammateIdle}
}

// Known reports whether cadre fires e.
func Known(e Event) bool {
	for _, k := range Events() {
		if k == e {
			return true
		}
	}
	return false
}

// Input is what a hook is told about an event, and its JSON (MarshalJSON)
// what a command hook reads: the SDK's hook.Input, the same type.
type Input = hook.Input

// Output is a hook's answer: the JSON object a command hook may print on
// standard output, with Claude Code's field names; SpecificOutput holds an
// event's own answers. They are the SDK's (package hook, public), the same
// types: a Go hook's answer is a command's, as it is.
type (
	Output         = hook.Output
	SpecificOutput = hook.SpecificOutput
)
