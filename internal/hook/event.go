package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

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
	// The team events (DESIGN S-A6): a task of the team's list created or
	// completed (a block refuses it), a teammate about to go idle (a block
	// keeps it working, the reason as its next prompt).
	TaskCreated   Event = "TaskCreated"
	TaskCompleted Event = "TaskCompleted"
	TeammateIdle  Event = "TeammateIdle"
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

// Input is what a hook is told about an event: the JSON object Claude Code
// writes on a command hook's standard input. Fields that do not belong to
// the event are left out of the JSON (see MarshalJSON).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	HookEventName  Event  `json:"hook_event_name"`
	// AgentID and AgentType name the subagent an event comes from: set for
	// a subagent's own tool calls and for SubagentStart and SubagentStop,
	// absent for the main agent.
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
	// null for automatic compaction.
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
}

// fields lists, per event, the JSON keys its input carries after
// hook_event_name, in the order Claude Code writes them.
var fields = map[Event][]string{
	PreToolUse:       {"tool_name", "tool_input", "tool_use_id"},
	PostToolUse:      {"tool_name", "tool_input", "tool_response", "tool_use_id"},
	UserPromptSubmit: {"prompt"},
	Stop:             {"stop_hook_active", "last_assistant_message"},
	SubagentStart:    {},
	SubagentStop:     {"stop_hook_active", "agent_transcript_path", "last_assistant_message"},
	PreCompact:       {"trigger", "custom_instructions"},
	SessionStart:     {"source", "model"},
	SessionEnd:       {"reason"},
	Notification:     {"message", "title", "notification_type"},
	TaskCreated:      {"task_id", "task_subject", "task_description", "teammate_name", "team_name"},
	TaskCompleted:    {"task_id", "task_subject", "task_description", "teammate_name", "team_name"},
	TeammateIdle:     {"teammate_name", "team_name"},
}

// noMode lists the events whose input has no permission_mode: they are
// not about what the agent may do (recorded from Claude Code 2.1.330).
var noMode = map[Event]bool{SessionStart: true, SessionEnd: true, SubagentStart: true}

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
	if !noMode[in.HookEventName] {
		keys = append(keys, "permission_mode")
	}
	keys = append(keys, "agent_id", "agent_type", "hook_event_name")
	keys = append(keys, fields[in.HookEventName]...)
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

// Output is a hook's answer: the JSON object a command hook may print on
// standard output, with Claude Code's field names; SpecificOutput holds an
// event's own answers. They are the SDK's (package hook, public), the same
// types: a Go hook's answer is a command's, as it is.
type (
	Output         = hook.Output
	SpecificOutput = hook.SpecificOutput
)
