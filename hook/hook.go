package hook

import (
	"context"
	"encoding/json"
	"time"
)

// Event names an event hooks run on, as Claude Code spells it.
type Event string

// The events cadre runs hooks on (docs/hooks.md says when each fires and
// what its input holds).
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SubagentStart    Event = "SubagentStart"
	SubagentStop     Event = "SubagentStop"
	PreCompact       Event = "PreCompact"
	SessionStart     Event = "SessionStart"
	SessionEnd       Event = "SessionEnd"
	Notification     Event = "Notification"
)

// Matcher is a group of hook functions for one event, as Claude Code's
// settings and Agent SDK group them.
type Matcher struct {
	// Matcher selects what the hooks run for: the tool name (PreToolUse,
	// PostToolUse), the agent type (SubagentStart, SubagentStop), the
	// trigger, source, reason or notification type of the other events.
	// "" and "*" select everything; "Edit|Write" names several; anything
	// else is a regular expression ("mcp__github__.*").
	Matcher string
	Hooks   []Func
	// Timeout bounds each hook's run (its ctx ends); 0 means 60 s.
	Timeout time.Duration
}

// Func is a hook written in Go. It runs with the same input and the
// same meaning as a settings "command" hook: its Output is what the
// command would print as JSON. A returned error does not block anything:
// it is logged and the event goes on, as for a command that fails.
type Func func(ctx context.Context, in Input) (Output, error)

// Input is what a hook is told about an event: Claude Code's hook
// input, field for field. Fields that do not belong to the event are
// empty.
type Input struct {
	// Event is the event's name (hook_event_name).
	Event          Event  `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// AgentID and AgentType name the subagent the event comes from (its
	// tool calls, SubagentStart, SubagentStop); empty for the main agent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`

	// PreToolUse and PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// Stop and SubagentStop. StopHookActive is true when the agent is
	// going on because a Stop hook blocked its stop before.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	AgentTranscriptPath  string `json:"agent_transcript_path,omitempty"`
	// PreCompact.
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	// SessionStart (Source, Model) and SessionEnd (Reason).
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`

	// Raw is the input exactly as a command hook reads it on standard
	// input (Claude Code's JSON), for a hook that forwards it.
	Raw json.RawMessage `json:"-"`
}

// Output is a hook's answer: Claude Code's hook JSON output. The zero
// Output lets the event go on unchanged. It unmarshals from the JSON a
// Claude Code hook prints.
type Output struct {
	// Continue, when set to false, stops the agent after this event;
	// StopReason says why, to the user.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput hides a command's standard output from the transcript.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// Decision "block" blocks what the event guards: the tool call
	// (PreToolUse), the prompt (UserPromptSubmit), the stop (Stop and
	// SubagentStop: the agent goes on, told Reason). After a tool call
	// (PostToolUse) Reason goes to the model with the result. "approve"
	// is the older spelling of permissionDecision "allow" (PreToolUse).
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// SystemMessage is a warning for the user, never shown to the model.
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput holds the answers that belong to one event.
type SpecificOutput struct {
	HookEventName Event `json:"hookEventName,omitempty"`
	// PermissionDecision (PreToolUse): "allow" runs the call without
	// asking (deny rules still refuse it), "deny" refuses it with
	// PermissionDecisionReason for the model, "ask" asks for approval even
	// where rules or the mode would allow it.
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput (PreToolUse) replaces the call's input; the tool's schema
	// and the permission rules judge the new input.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	// AdditionalContext is added to what the model sees.
	AdditionalContext string `json:"additionalContext,omitempty"`
}
