package cadre

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
)

// HookEvent names an event hooks run on, as Claude Code spells it.
type HookEvent string

// The events cadre runs hooks on (docs/hooks.md says when each fires and
// what its input holds).
const (
	HookPreToolUse       HookEvent = "PreToolUse"
	HookPostToolUse      HookEvent = "PostToolUse"
	HookUserPromptSubmit HookEvent = "UserPromptSubmit"
	HookStop             HookEvent = "Stop"
	HookSubagentStart    HookEvent = "SubagentStart"
	HookSubagentStop     HookEvent = "SubagentStop"
	HookPreCompact       HookEvent = "PreCompact"
	HookSessionStart     HookEvent = "SessionStart"
	HookSessionEnd       HookEvent = "SessionEnd"
	HookNotification     HookEvent = "Notification"
)

// HookMatcher is a group of hook functions for one event, as Claude Code's
// settings and Agent SDK group them.
type HookMatcher struct {
	// Matcher selects what the hooks run for: the tool name (PreToolUse,
	// PostToolUse), the agent type (SubagentStart, SubagentStop), the
	// trigger, source, reason or notification type of the other events.
	// "" and "*" select everything; "Edit|Write" names several; anything
	// else is a regular expression ("mcp__github__.*").
	Matcher string
	Hooks   []HookFunc
	// Timeout bounds each hook's run (its ctx ends); 0 means 60 s.
	Timeout time.Duration
}

// HookFunc is a hook written in Go. It runs with the same input and the
// same meaning as a settings "command" hook: its HookOutput is what the
// command would print as JSON. A returned error does not block anything:
// it is logged and the event goes on, as for a command that fails.
type HookFunc func(ctx context.Context, in HookInput) (HookOutput, error)

// HookInput is what a hook is told about an event: Claude Code's hook
// input, field for field. Fields that do not belong to the event are
// empty.
type HookInput struct {
	// Event is the event's name (hook_event_name).
	Event          HookEvent `json:"hook_event_name"`
	SessionID      string    `json:"session_id"`
	TranscriptPath string    `json:"transcript_path"`
	Cwd            string    `json:"cwd"`
	PermissionMode string    `json:"permission_mode,omitempty"`
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

// HookOutput is a hook's answer: Claude Code's hook JSON output. The zero
// HookOutput lets the event go on unchanged. It unmarshals from the JSON a
// Claude Code hook prints.
type HookOutput struct {
	// Continue, when set to false, stops the agent after this event;
	// StopReason says why, to the user.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput hides a command's standard output from the transcript.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// Decision "block" blocks what the event guards: the tool call
	// (PreToolUse), the prompt (UserPromptSubmit), the stop (Stop and
	// SubagentStop: the agent goes on, told Reason). After a tool call
	// (PostToolUse) Reason goes to the model with the result.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// SystemMessage is a warning for the user, never shown to the model.
	SystemMessage      string              `json:"systemMessage,omitempty"`
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput holds the answers that belong to one event.
type HookSpecificOutput struct {
	HookEventName HookEvent `json:"hookEventName,omitempty"`
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

// hooks are the main session's hooks; nil when none is set.
func (sr *sessionRun) hooks() *runner.Hooks {
	r := sr.r
	if r.app.Hooks == nil {
		return nil
	}
	return &runner.Hooks{Engine: r.app.Hooks, Base: hook.Input{
		SessionID: sr.sess.Info.ID, TranscriptPath: sr.sess.Info.TranscriptPath, Cwd: r.app.Cwd, PermissionMode: string(sr.mode),
	}}
}

// input is a user message's turn input, after the UserPromptSubmit hooks
// — and for the conversation's first, the SessionStart hooks — with the
// context they added. The error is a message a hook blocked.
func (sr *sessionRun) input(ctx context.Context, h *runner.Hooks, msg llm.Message, first bool) (llm.Message, error) {
	var extra string
	if first && h.Has(hook.SessionStart) {
		source := "startup"
		if len(sr.history) > 0 {
			source = "resume"
		}
		extra = h.Fire(ctx, hook.Input{HookEventName: hook.SessionStart, Source: source, Model: sr.model.Name()}).Context
	}
	submitted, err := runner.SubmitPrompt(ctx, h, msg.Text())
	if err != nil {
		return msg, err
	}
	// SubmitPrompt's message is the text, then what the hooks added.
	msg.Content = append(slices.Clone(msg.Content), submitted.Content[1:]...)
	if extra != "" {
		msg.Content = append(msg.Content, llm.Text(extra))
	}
	return msg, nil
}

// end runs the SessionEnd hooks. The run may have been cancelled: they
// still run, bounded by their timeouts.
func (sr *sessionRun) end(h *runner.Hooks) {
	h.Fire(context.Background(), hook.Input{HookEventName: hook.SessionEnd, Reason: "other"})
}

// notify runs the Notification hooks for a permission prompt.
func (r *Runtime) notify(ctx context.Context, q permission.Question) {
	if !r.app.Hooks.Has(hook.Notification) {
		return
	}
	r.app.Hooks.Run(ctx, hook.Input{
		HookEventName: hook.Notification, SessionID: q.SessionID, Cwd: r.app.Cwd, PermissionMode: string(r.app.Policy.Mode),
		Message: fmt.Sprintf("cadre needs your permission to use %s", q.Tool), Title: "Permission needed", NotificationType: "permission_prompt",
	})
}

// hookConfig turns Options.Hooks into the engine's configuration.
func hookConfig(hooks map[HookEvent][]HookMatcher) (hook.Config, error) {
	c := hook.Config{}
	for ev, ms := range hooks {
		if !hook.Known(hook.Event(ev)) {
			return nil, fmt.Errorf("Options.Hooks: unknown event %q", ev)
		}
		for i, m := range ms {
			hm := hook.Matcher{Matcher: m.Matcher, Timeout: m.Timeout}
			for j, f := range m.Hooks {
				if f == nil {
					return nil, fmt.Errorf("Options.Hooks[%s][%d].Hooks[%d] is nil", ev, i, j)
				}
				hm.Handlers = append(hm.Handlers, hook.Handler{Name: "callback", Run: func(ctx context.Context, c hook.Call) (hook.Output, error) {
					out, err := f(ctx, hookInputOf(c))
					return out.internal(), err
				}})
			}
			c[hook.Event(ev)] = append(c[hook.Event(ev)], hm)
		}
	}
	return c, nil
}

func hookInputOf(c hook.Call) HookInput {
	in := c.Input
	out := HookInput{
		Event: HookEvent(in.HookEventName), SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		PermissionMode: in.PermissionMode, AgentID: in.AgentID, AgentType: in.AgentType,
		ToolName: in.ToolName, ToolInput: in.ToolInput, ToolResponse: in.ToolResponse, ToolUseID: in.ToolUseID,
		Prompt: in.Prompt, StopHookActive: in.StopHookActive, LastAssistantMessage: in.LastAssistantMessage,
		AgentTranscriptPath: in.AgentTranscriptPath, Trigger: in.Trigger, Source: in.Source, Model: in.Model,
		Reason: in.Reason, Message: in.Message, Title: in.Title, NotificationType: in.NotificationType,
		Raw: c.Raw,
	}
	if in.CustomInstructions != nil {
		out.CustomInstructions = *in.CustomInstructions
	}
	return out
}

func (o HookOutput) internal() hook.Output {
	out := hook.Output{
		Continue: o.Continue, StopReason: o.StopReason, SuppressOutput: o.SuppressOutput,
		Decision: o.Decision, Reason: o.Reason, SystemMessage: o.SystemMessage,
	}
	if s := o.HookSpecificOutput; s != nil {
		out.HookSpecificOutput = &hook.SpecificOutput{
			HookEventName: hook.Event(s.HookEventName), PermissionDecision: s.PermissionDecision,
			PermissionDecisionReason: s.PermissionDecisionReason, UpdatedInput: s.UpdatedInput,
			AdditionalContext: s.AdditionalContext,
		}
	}
	return out
}
