package hook

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/hook"
)

// FromFuncs is the configuration of hooks written in Go (the SDK's
// Options.Hooks): each function becomes a handler that gets the event's
// input in the SDK's shape and whose Output is a command hook's. An
// unknown event or a nil function is an error naming it.
func FromFuncs(funcs map[Event][]hook.Matcher) (Config, error) {
	c := Config{}
	for ev, ms := range funcs {
		if !Known(ev) {
			return nil, fmt.Errorf("Options.Hooks: unknown event %q", ev)
		}
		for i, m := range ms {
			hm := Matcher{Matcher: m.Matcher, Timeout: m.Timeout}
			for j, f := range m.Hooks {
				if f == nil {
					return nil, fmt.Errorf("Options.Hooks[%s][%d].Hooks[%d] is nil", ev, i, j)
				}
				hm.Handlers = append(hm.Handlers, Handler{Name: "callback", Run: func(ctx context.Context, c Call) (Output, error) {
					return f(ctx, c.public())
				}})
			}
			c[ev] = append(c[ev], hm)
		}
	}
	return c, nil
}

// public is the call's input as a Go hook gets it. It differs from Input,
// the JSON a command reads, where Claude Code's wire form is not a Go
// API's: CustomInstructions is null there for an automatic compaction,
// "" here.
func (c Call) public() hook.Input {
	in := c.Input
	out := hook.Input{
		Event: in.HookEventName, SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
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
