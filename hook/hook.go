package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	// The team events: a task of the team's list created or completed (a
	// block refuses it), a teammate about to go idle (a block keeps it
	// working, the reason as its next prompt).
	TaskCreated   Event = "TaskCreated"
	TaskCompleted Event = "TaskCompleted"
	TeammateIdle  Event = "TeammateIdle"
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
// input, field for field, and the one type both kinds of hook get — a Go
// hook (Func) this value, a command hook its JSON (MarshalJSON) on
// standard input. Fields that do not belong to the event are empty.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Event is the event's name (hook_event_name).
	Event Event `json:"hook_event_name"`
	// AgentID and AgentType name the subagent an event comes from: set for
	// a subagent's own tool calls and for SubagentStart and SubagentStop,
	// empty for the main agent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`

	// PreToolUse and PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`

	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`

	// Stop and SubagentStop: StopHookActive is true when the agent goes on
	// because a Stop hook blocked its stop before — a hook that always
	// blocks would otherwise never let it end.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	// AgentTranscriptPath is the subagent's own transcript (SubagentStop).
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`

	// PreCompact: Trigger is "auto" or "manual"; CustomInstructions is
	// nil (JSON null) for an automatic compaction.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions"`

	// SessionStart: Source is "startup", "resume", "clear" or "compact";
	// Model the session's model.
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
	// SessionEnd: Reason is "clear", "logout", "prompt_input_exit" or
	// "other".
	Reason string `json:"reason,omitempty"`

	// Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`

	// TaskCreated and TaskCompleted: the task of the team's list;
	// TeammateIdle too: the teammate (the agent acting) and its team.
	TaskID          string `json:"task_id,omitempty"`
	TaskSubject     string `json:"task_subject,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
	TeammateName    string `json:"teammate_name,omitempty"`
	TeamName        string `json:"team_name,omitempty"`

	// Raw is the input exactly as a command hook reads it on standard
	// input (Claude Code's JSON), for a Go hook that forwards it.
	Raw json.RawMessage `json:"-"`
}

// eventFields lists the JSON keys an event's input carries after
// hook_event_name, in the order Claude Code writes them.
func eventFields(e Event) []string {
	switch e {
	case PreToolUse:
		return []string{"tool_name", "tool_input", "tool_use_id"}
	case PostToolUse:
		return []string{"tool_name", "tool_input", "tool_response", "tool_use_id"}
	case UserPromptSubmit:
		return []string{"prompt"}
	case Stop:
		return []string{"stop_hook_active", "last_assistant_message"}
	case SubagentStart:
		return []string{}
	case SubagentStop:
		return []string{"stop_hook_active", "agent_transcript_path", "last_assistant_message"}
	case PreCompact:
		return []string{"trigger", "custom_instructions"}
	case SessionStart:
		return []string{"source", "model"}
	case SessionEnd:
		return []string{"reason"}
	case Notification:
		return []string{"message", "title", "notification_type"}
	case TaskCreated:
		return []string{"task_id", "task_subject", "task_description", "teammate_name", "team_name"}
	case TaskCompleted:
		return []string{"task_id", "task_subject", "task_description", "teammate_name", "team_name"}
	case TeammateIdle:
		return []string{"teammate_name", "team_name"}
	}
	return nil
}

// hasMode reports whether an event's input carries permission_mode: not
// those that are not about what the agent may do (recorded from Claude
// Code 2.1.330).
func hasMode(e Event) bool { return e != SessionStart && e != SessionEnd && e != SubagentStart }

// MarshalJSON writes the input as Claude Code does: the common fields
// (session_id, transcript_path, cwd, permission_mode, and agent_id and
// agent_type for a subagent), hook_event_name, then the event's own
// fields — stop_hook_active and custom_instructions even when false or
// null, and nothing of other events.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input // without this method
	all, err := json.Marshal(plain(in))
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(all, &m); err != nil {
		return nil, err
	}
	keys := []string{"session_id", "transcript_path", "cwd"}
	if hasMode(in.Event) {
		keys = append(keys, "permission_mode")
	}
	keys = append(keys, "agent_id", "agent_type", "hook_event_name")
	keys = append(keys, eventFields(in.Event)...)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.DeleteFunc(keys, func(k string) bool { _, ok := m[k]; return !ok }) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", k)
		b.Write(m[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
