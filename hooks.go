package cadre

import (
	"context"
	"slices"

	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
)

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
		extra = h.Fire(ctx, hook.Input{Event: hook.SessionStart, Source: source, Model: sr.model.Name()}).Context
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
	h.Fire(context.Background(), hook.Input{Event: hook.SessionEnd, Reason: "other"})
}
