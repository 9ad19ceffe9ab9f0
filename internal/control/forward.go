package control

import (
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// forwarded is what the program sees of e. Without forwardSubagentText a
// subagent's conversation stays inside cadre except its tool_use and
// tool_result blocks (enough to show progress, the SDK's documented
// default) and its final answer (an assistant message that calls no tool),
// which Claude Code 2.1.330 also forwards; a message left empty is not
// written. With it, every block goes out.
func forwarded(e cadre.Event, text bool) (cadre.Event, bool) {
	if text || e.ParentToolUseID == "" || e.Message == nil || (e.Type != cadre.EventAssistant && e.Type != cadre.EventUser) {
		return e, true
	}
	final := e.Type == cadre.EventAssistant
	for _, b := range e.Message.Content {
		if b.Type == llm.BlockToolUse {
			final = false
		}
	}
	var kept []llm.Block
	for _, b := range e.Message.Content {
		switch {
		case b.Type == llm.BlockToolUse || b.Type == llm.BlockToolResult:
			kept = append(kept, b)
		case final && b.Type == llm.BlockText:
			kept = append(kept, b)
		}
	}
	if len(kept) == 0 {
		return e, false
	}
	if len(kept) == len(e.Message.Content) {
		return e, true
	}
	m := *e.Message
	m.Content = kept
	e.Message = &m
	return e, true
}
