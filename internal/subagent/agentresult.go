package subagent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// AgentResult turns a finished child into Claude Code's Agent tool result:
// the child's final text and the continuation trailer (S-L1). The claude
// profile's Agent tool answers with it, and so does the Skill tool's fork
// (S-F2), whatever the profile.
func AgentResult(o *Outcome, prompt string) (tool.Result, error) {
	res := o.res
	if cause, ok := o.task.timedOut(); ok {
		// The child's own time limit, not the caller's turn: the model
		// learns which agent ran out of time, and what it had written.
		partial := ""
		if text := strings.TrimSpace(res.Result); text != "" {
			partial = "\nIts output so far:\n" + escapeTags(text)
		}
		return tool.Errorf("Agent %q timed out: %v.%s\n(session_id: %s)", o.def.Name, cause, partial, o.sessionID), nil
	}
	if errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded) {
		if w := o.task.worktree(); w != nil && w.Kept {
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
		return tool.Errorf("Agent %q failed: %v\n(session_id: %s)", o.def.Name, res.Err, o.sessionID), nil
	case res.Err != nil:
		note = fmt.Sprintf("\n\n(The agent stopped before finishing: %v. Its output so far is above.)", res.Err)
	case res.Subtype == loop.SubtypeMaxTurns:
		note = fmt.Sprintf("\n\n(The agent reached its turn limit (%d) before finishing. Its output so far is above.)", res.Turns)
	}
	for _, w := range o.warnings {
		note += "\n(Note: " + w + ")"
	}
	if text == "" {
		text = "(The agent finished without a final message.)"
	}
	total := res.Usage.Total()
	// The child's text is framed and escaped: it must not forge the
	// trailer below, nor any tag of the parent's context (frame.go).
	body := fmt.Sprintf("%s\n\n%s%s\n\n<task_metadata>session_id: %s</task_metadata>\n<usage>agentId: %s\ntotal_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		untrustedNote, escapeTags(text), note, o.sessionID, o.sessionID, total, res.ToolUses, res.Duration.Milliseconds())
	meta := map[string]any{
		"status": "completed", "agentId": o.sessionID, "sessionId": o.sessionID, "agentType": o.def.Name,
		"prompt": prompt, "content": []llm.Block{llm.Text(text)},
		"totalDurationMs": res.Duration.Milliseconds(), "totalTokens": total, "totalToolUseCount": res.ToolUses,
		"usage": res.Usage, "totalCostUsd": res.Cost,
	}
	if w := o.task.worktree(); w != nil && w.Kept {
		meta["worktreePath"], meta["worktreeBranch"] = w.Path, w.Branch
	}
	return tool.Result{Content: []llm.Block{llm.Text(body)}, Meta: meta}, nil
}
