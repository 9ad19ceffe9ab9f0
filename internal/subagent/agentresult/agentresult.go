package agentresult

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Finished is a child run that ended in the foreground, as the spawn
// core's Outcome describes it (subagent.Outcome).
type Finished interface {
	Def() agent.Definition
	SessionID() string
	Result() *runner.Result
	// Warnings are what the spawn noted for the model.
	Warnings() []string
	// TimedOut reports the limit that elapsed, if the run timed out.
	TimedOut() (error, bool)
	// Worktree is what became of its worktree (nil without one).
	Worktree() *worktree.Outcome
}

// Of turns a finished child into Claude Code's Agent tool result: the
// child's final text and the continuation trailer (S-L1). The claude
// profile's Agent tool answers with it, and so does the Skill tool's fork
// (S-F2), whatever the profile.
func Of(o Finished, promptText string) (tool.Result, error) {
	res := o.Result()
	name, id := o.Def().Name, o.SessionID()
	if cause, ok := o.TimedOut(); ok {
		// The child's own time limit, not the caller's turn: the model
		// learns which agent ran out of time, and what it had written.
		partial := ""
		if text := strings.TrimSpace(res.Result); text != "" {
			partial = "\nIts output so far:\n" + prompt.Escape(text)
		}
		return tool.Errorf("Agent %q timed out: %v.%s\n(session_id: %s)", name, cause, partial, id), nil
	}
	if errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded) {
		if w := o.Worktree(); w != nil && w.Kept {
			// Interrupted, but its worktree holds work: say where.
			return tool.Errorf("Interrupted: the agent was stopped.\n[worktree] %s", w.Summary), nil
		}
		// The parent turn was cancelled: the loop reports it as interrupted.
		return tool.Result{}, res.Err
	}
	text := strings.TrimSpace(res.Result)
	var note string
	switch {
	case res.Err != nil && text == "":
		return tool.Errorf("Agent %q failed: %v\n(session_id: %s)", name, res.Err, id), nil
	case res.Err != nil:
		note = fmt.Sprintf("\n\n(The agent stopped before finishing: %v. Its output so far is above.)", res.Err)
	case res.Subtype == loop.SubtypeMaxTurns:
		note = fmt.Sprintf("\n\n(The agent reached its turn limit (%d) before finishing. Its output so far is above.)", res.Turns)
	}
	for _, w := range o.Warnings() {
		note += "\n(Note: " + w + ")"
	}
	if text == "" {
		text = "(The agent finished without a final message.)"
	}
	total := res.Usage.Total()
	// The child's text is framed and escaped: it must not forge the
	// trailer below, nor any tag of the parent's context (prompt.Escape).
	body := fmt.Sprintf("%s\n\n%s%s\n\n<task_metadata>session_id: %s</task_metadata>\n<usage>agentId: %s\ntotal_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		prompt.Untrusted, prompt.Escape(text), note, id, id, total, res.ToolUses, res.Duration.Milliseconds())
	meta := map[string]any{
		"status": "completed", "agentId": id, "sessionId": id, "agentType": name,
		"prompt": promptText, "content": []llm.Block{llm.Text(text)},
		"totalDurationMs": res.Duration.Milliseconds(), "totalTokens": total, "totalToolUseCount": res.ToolUses,
		"usage": res.Usage, "totalCostUsd": res.Cost,
	}
	if w := o.Worktree(); w != nil && w.Kept {
		meta["worktreePath"], meta["worktreeBranch"] = w.Path, w.Branch
	}
	return tool.Result{Content: []llm.Block{llm.Text(body)}, Meta: meta}, nil
}
