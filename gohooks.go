package cadre

import "github.com/cadre-dev/cadre/hook"

// Hooks written in Go (package hook), under the SDK's names.
type (
	// HookEvent names an event hooks run on, as Claude Code spells it.
	HookEvent = hook.Event
	// HookMatcher is a group of hook functions for one event.
	HookMatcher = hook.Matcher
	// HookFunc is a hook written in Go.
	HookFunc = hook.Func
	// HookInput is what a hook is told about an event.
	HookInput = hook.Input
	// HookOutput is a hook's answer.
	HookOutput = hook.Output
	// HookSpecificOutput holds the answers that belong to one event.
	HookSpecificOutput = hook.SpecificOutput
)

// The events cadre runs hooks on (docs/hooks.md says when each fires and
// what its input holds).
const (
	HookPreToolUse       = hook.PreToolUse
	HookPostToolUse      = hook.PostToolUse
	HookUserPromptSubmit = hook.UserPromptSubmit
	HookStop             = hook.Stop
	HookSubagentStart    = hook.SubagentStart
	HookSubagentStop     = hook.SubagentStop
	HookPreCompact       = hook.PreCompact
	HookSessionStart     = hook.SessionStart
	HookSessionEnd       = hook.SessionEnd
	HookNotification     = hook.Notification
	HookTaskCreated      = hook.TaskCreated
	HookTaskCompleted    = hook.TaskCompleted
	HookTeammateIdle     = hook.TeammateIdle
)
