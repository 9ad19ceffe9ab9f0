package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Hooks are one session's hooks and what each of their inputs says about
// the session. A nil *Hooks runs nothing.
type Hooks struct {
	Engine *hook.Engine
	// Base holds the fields every input carries: session_id and
	// transcript_path (the main session's, inside a subagent too, as in
	// Claude Code), cwd, permission_mode, and, inside a subagent, agent_id
	// and agent_type.
	Base hook.Input
	// AgentTranscriptPath is set for a subagent: its end fires
	// SubagentStop, which names its own transcript, instead of Stop.
	AgentTranscriptPath string
}

// maxStopBlocks bounds how many times in a row Stop hooks may keep an
// agent going: beyond stop_hook_active, which a hook may ignore.
const maxStopBlocks = 8

// Fire runs the hooks of in's event with the session's fields filled in.
func (h *Hooks) Fire(ctx context.Context, in hook.Input) hook.Result {
	if h == nil || !h.Engine.Has(in.Event) {
		return hook.Result{}
	}
	b := h.Base
	in.SessionID, in.TranscriptPath, in.Cwd, in.PermissionMode = b.SessionID, b.TranscriptPath, b.Cwd, b.PermissionMode
	if in.AgentID == "" {
		in.AgentID, in.AgentType = b.AgentID, b.AgentType
	}
	return h.Engine.Run(ctx, in)
}

// Has reports whether any hook is set for ev.
func (h *Hooks) Has(ev hook.Event) bool { return h != nil && h.Engine.Has(ev) }

// tools is the loop's ToolHooks: PreToolUse and PostToolUse.
type tools struct{ h *Hooks }

func (t tools) BeforeTool(ctx context.Context, env tool.Env, name string, input json.RawMessage) loop.BeforeTool {
	r := t.h.Fire(ctx, hook.Input{Event: hook.PreToolUse, ToolName: name, ToolInput: input, ToolUseID: env.ToolUseID})
	out := loop.BeforeTool{Context: r.Context, Stop: r.Stop, Input: r.UpdatedInput}
	switch {
	case r.Permission == "deny":
		out.Deny, out.Reason = true, r.Reason
	case r.Permission != "":
		out.Verdict, out.Reason = r.Permission, r.PermissionReason
	}
	return out
}

func (t tools) AfterTool(ctx context.Context, env tool.Env, name string, input, response json.RawMessage) loop.AfterTool {
	r := t.h.Fire(ctx, hook.Input{Event: hook.PostToolUse, ToolName: name, ToolInput: input, ToolResponse: response, ToolUseID: env.ToolUseID})
	text := r.Context
	if r.Blocked {
		// The call ran: a PostToolUse block can only tell the model.
		text = join(fmt.Sprintf("PostToolUse hook feedback: %s", r.Reason), text)
	}
	return loop.AfterTool{Context: text, Stop: r.Stop}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// toolHooks is the loop's hooks for h, nil when no tool hook is set.
func toolHooks(h *Hooks) loop.ToolHooks {
	if !h.Has(hook.PreToolUse) && !h.Has(hook.PostToolUse) {
		return nil
	}
	return tools{h}
}

// ErrPromptBlocked is wrapped by SubmitPrompt's error when a
// UserPromptSubmit hook blocked the prompt.
var ErrPromptBlocked = errors.New("prompt blocked by a UserPromptSubmit hook")

// SubmitPrompt runs the UserPromptSubmit hooks on a user's prompt and
// returns the message to send: the prompt, then the context the hooks
// added. A blocked prompt is an error wrapping ErrPromptBlocked, with the
// hook's reason; the prompt must not reach the model.
func SubmitPrompt(ctx context.Context, h *Hooks, prompt string) (llm.Message, error) {
	msg := llm.UserText(prompt)
	if !h.Has(hook.UserPromptSubmit) {
		return msg, nil
	}
	r := h.Fire(ctx, hook.Input{Event: hook.UserPromptSubmit, Prompt: prompt})
	switch {
	case r.Blocked:
		return msg, fmt.Errorf("%w: %s", ErrPromptBlocked, orDefault(r.Reason, "(no reason given)"))
	case r.Stop:
		return msg, fmt.Errorf("%w: %s", ErrPromptBlocked, orDefault(r.StopReason, "a hook asked to stop"))
	}
	if r.Context != "" {
		msg.Content = append(msg.Content, llm.Text(r.Context))
	}
	return msg, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// stopFeedback runs the Stop (or, for a subagent, SubagentStop) hooks
// at the end of a turn. It returns the message that keeps the agent going
// when a hook blocked the stop, or nil to let it stop.
func (c *Conversation) stopFeedback(ctx context.Context, out *loop.Outcome, blocks int) *llm.Message {
	h := c.spec.Hooks
	ev := hook.Stop
	if h != nil && h.AgentTranscriptPath != "" {
		ev = hook.SubagentStop
	}
	if !h.Has(ev) || out.Err != nil || out.Subtype != loop.SubtypeSuccess || out.HookStopped || ctx.Err() != nil {
		return nil
	}
	in := hook.Input{Event: ev, StopHookActive: blocks > 0, LastAssistantMessage: out.Result}
	if ev == hook.SubagentStop {
		in.AgentTranscriptPath = h.AgentTranscriptPath
	}
	r := h.Fire(ctx, in)
	if !r.Blocked || r.Stop || blocks >= maxStopBlocks {
		return nil
	}
	m := llm.UserText(fmt.Sprintf("%s hook feedback:\n%s", ev, orDefault(r.Reason, "(no reason given)")))
	if r.Context != "" {
		m.Content = append(m.Content, llm.Text(r.Context))
	}
	return &m
}

// manualKey marks the context of a compaction the user asked for
// (Conversation.Compact), which the PreCompact hooks see as "manual".
type manualKey struct{}

// preCompact runs the PreCompact hooks before a compaction; a blocking
// hook stops it, and the run goes on with the full history.
func preCompact(ctx context.Context, h *Hooks) error {
	if !h.Has(hook.PreCompact) {
		return nil
	}
	trigger := "auto"
	if ctx.Value(manualKey{}) != nil {
		trigger = "manual"
	}
	r := h.Fire(ctx, hook.Input{Event: hook.PreCompact, Trigger: trigger})
	if r.Blocked {
		return fmt.Errorf("a PreCompact hook blocked the compaction: %s", orDefault(r.Reason, "(no reason given)"))
	}
	return nil
}
