package acp

import (
	"encoding/json"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Bounds on the text that travels in tool call content: an editor shows a
// summary, the transcript keeps the whole.
const (
	resultLimit   = 8 << 10
	progressLimit = 2 << 10
)

// translator turns the events of one conversation — its main agent's and
// every subagent's — into session updates. It remembers each tool call it
// announced, so that later events update that call and never move it back
// from a final status. It is not safe for concurrent use: the session
// serialises its callers.
type translator struct {
	cwd   string
	calls map[string]*toolCall
}

// toolCall is what the translator knows of one tool call.
type toolCall struct {
	id, name string
	status   acpsdk.ToolCallStatus
	// parent is the Agent call whose subagent made this call ("" for the
	// main agent's).
	parent string
	// hidden calls (TodoWrite, shown as the plan) get no tool call updates.
	hidden bool

	// For a call that started a subagent: whether it runs in the
	// background, the subagent's latest text, and its latest tool call
	// (done once that call has its result).
	background bool
	text       string
	tool       string
	toolDone   bool
}

func newTranslator(cwd string) *translator {
	return &translator{cwd: cwd, calls: map[string]*toolCall{}}
}

// event translates one event. With replay set (a loaded session's history)
// the user's own messages are sent back as user message chunks too.
func (t *translator) event(e cadre.Event, replay bool) []acpsdk.SessionUpdate {
	switch e.Type {
	case cadre.EventAssistant:
		if e.Message == nil {
			return nil
		}
		if e.ParentToolUseID != "" {
			return t.childAssistant(e)
		}
		return t.assistant(e.Message.Content)
	case cadre.EventUser:
		if e.Message == nil {
			return nil
		}
		return t.user(e, replay)
	case cadre.EventSystem:
		if e.Task != nil {
			return t.task(e.Subtype, e.Task)
		}
	}
	return nil
}

func (t *translator) assistant(blocks []llm.Block) []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			if b.Text != "" {
				out = append(out, acpsdk.UpdateAgentMessageText(b.Text))
			}
		case llm.BlockThinking:
			if b.Thinking != "" {
				out = append(out, acpsdk.UpdateAgentThoughtText(b.Thinking))
			}
		case llm.BlockToolUse:
			out = append(out, t.announce(b, "", "", "")...)
		}
	}
	return out
}

// childAssistant shows a subagent's message: its tool calls as calls of
// their own, and its text and current tool in the content of the Agent
// call that started it.
func (t *translator) childAssistant(e cadre.Event) []acpsdk.SessionUpdate {
	parent := t.calls[e.ParentToolUseID]
	var out []acpsdk.SessionUpdate
	if parent != nil {
		out = append(out, t.running(parent)...)
	}
	changed := false
	for _, b := range e.Message.Content {
		switch b.Type {
		case llm.BlockText:
			if s := strings.TrimSpace(b.Text); s != "" && parent != nil {
				parent.text, changed = sized(s, progressLimit), true
			}
		case llm.BlockToolUse:
			out = append(out, t.announce(b, e.ParentToolUseID, e.AgentType, e.AgentID)...)
			if parent != nil {
				parent.tool, parent.toolDone, changed = present(b.Name, b.Input, t.cwd).title, false, true
			}
		}
	}
	if changed {
		out = append(out, t.progress(parent)...)
	}
	return out
}

// announce starts a tool call, pending until it is seen to run. A call of
// a subagent is titled with the agent's name and tagged in _meta with the
// Agent call it belongs to.
func (t *translator) announce(b llm.Block, parent, agentType, agentID string) []acpsdk.SessionUpdate {
	if c, ok := t.calls[b.ID]; ok && !c.hidden {
		return nil // already announced, by a permission request
	}
	c := &toolCall{id: b.ID, name: b.Name, status: acpsdk.ToolCallStatusPending, parent: parent}
	t.calls[b.ID] = c
	if b.Name == "TodoWrite" && parent == "" {
		if entries, ok := plan(b.Input); ok {
			c.hidden = true
			return []acpsdk.SessionUpdate{acpsdk.UpdatePlan(entries...)}
		}
	}
	return []acpsdk.SessionUpdate{{ToolCall: t.start(c, b.Input, agentType, agentID)}}
}

func (t *translator) start(c *toolCall, input json.RawMessage, agentType, agentID string) *acpsdk.SessionUpdateToolCall {
	p := present(c.name, input, t.cwd)
	tc := &acpsdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call", ToolCallId: acpsdk.ToolCallId(c.id), Title: p.title, Kind: p.kind,
		Status: c.status, Locations: p.locations, Content: p.diff, RawInput: rawInput(input),
	}
	if c.parent != "" {
		tc.Title = agentLabel(agentType) + ": " + p.title
		tc.Meta = childMeta(c.parent, agentType, agentID)
	}
	return tc
}

func childMeta(parent, agentType, agentID string) map[string]any {
	return map[string]any{"cadre": map[string]any{"parentToolCallId": parent, "agent": agentType, "agentId": agentID}}
}

func rawInput(input json.RawMessage) any {
	if !json.Valid(input) {
		return nil
	}
	return input
}

// user translates tool results (and, in a replay, the user's text).
func (t *translator) user(e cadre.Event, replay bool) []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, b := range e.Message.Content {
		switch b.Type {
		case llm.BlockText:
			if replay && e.ParentToolUseID == "" && b.Text != "" {
				out = append(out, acpsdk.UpdateUserMessageText(b.Text))
			}
		case llm.BlockToolResult:
			out = append(out, t.result(b, e.ToolUseResult)...)
		}
	}
	return out
}

func (t *translator) result(b llm.Block, meta any) []acpsdk.SessionUpdate {
	c := t.calls[b.ToolUseID]
	if c == nil || c.hidden {
		return nil
	}
	var out []acpsdk.SessionUpdate
	if p := t.calls[c.parent]; p != nil && p.tool != "" && !p.toolDone && !final(p.status) {
		p.toolDone = true
		out = append(out, t.progress(p)...)
	}
	text := sized(b.ResultText(), resultLimit)
	if agentTools[c.name] && !b.IsError && (c.background || launched(meta, b.ToolUseID)) {
		// The launch of a background run: the run goes on, and its
		// notification ends the call.
		c.background = true
		out = append(out, t.running(c)...)
		return append(out, t.progress(c)...)
	}
	status := acpsdk.ToolCallStatusCompleted
	if b.IsError {
		status = acpsdk.ToolCallStatusFailed
	}
	if agentTools[c.name] && c.text != "" && status == acpsdk.ToolCallStatusCompleted {
		// The subagent's own last words: the tool result wraps them for
		// the model, the editor shows them as they were.
		text = c.text
	}
	var content []acpsdk.ToolCallContent
	if status == acpsdk.ToolCallStatusFailed || kinds[c.name] != acpsdk.ToolKindEdit {
		// A successful edit keeps its diff; everything else shows its result.
		content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}
	}
	return append(out, t.finish(c, status, content)...)
}

// launched reports whether a tool result's detail says a background run
// was launched (the claude surface's async_launched).
func launched(meta any, id string) bool {
	m, ok := meta.(map[string]any)
	if !ok {
		return false
	}
	if one, ok := m[id].(map[string]any); ok {
		m = one
	}
	return m["status"] == "async_launched"
}

// task follows a background run through its task events.
func (t *translator) task(subtype string, te *cadre.TaskEvent) []acpsdk.SessionUpdate {
	c := t.calls[te.ToolUseID]
	if c == nil {
		return nil
	}
	switch subtype {
	case cadre.SubtypeTaskStarted:
		if te.Background {
			c.background = true
		}
		return t.running(c)
	case cadre.SubtypeTaskProgress:
		if te.LastToolName != "" && c.background && te.LastToolName != c.tool {
			c.tool, c.toolDone = te.LastToolName, false
			return t.progress(c)
		}
	case cadre.SubtypeTaskNotification:
		if !c.background {
			return nil // a foreground run ends with its tool result
		}
		status := acpsdk.ToolCallStatusCompleted
		if te.Status != cadre.TaskCompleted {
			status = acpsdk.ToolCallStatusFailed
		}
		// The subagent's own last words say more than the summary.
		text := first(te.Summary, string(te.Status))
		if status == acpsdk.ToolCallStatusCompleted && c.text != "" {
			text = c.text
		}
		return t.finish(c, status, []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(sized(text, resultLimit)))})
	}
	return nil
}

// running moves a pending call to in_progress: it was seen to run.
func (t *translator) running(c *toolCall) []acpsdk.SessionUpdate {
	if c.hidden || c.status != acpsdk.ToolCallStatusPending {
		return nil
	}
	c.status = acpsdk.ToolCallStatusInProgress
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(acpsdk.ToolCallId(c.id), acpsdk.WithUpdateStatus(c.status))}
}

// finish gives a call its final status; a call already final stays as it is.
func (t *translator) finish(c *toolCall, status acpsdk.ToolCallStatus, content []acpsdk.ToolCallContent) []acpsdk.SessionUpdate {
	if final(c.status) {
		return nil
	}
	c.status = status
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(status)}
	if content != nil {
		opts = append(opts, acpsdk.WithUpdateContent(content))
	}
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(acpsdk.ToolCallId(c.id), opts...)}
}

// progress shows what the subagent of an Agent call is doing: its latest
// text and its latest tool call, running (→) or done (✓).
func (t *translator) progress(c *toolCall) []acpsdk.SessionUpdate {
	var content []acpsdk.ToolCallContent
	if c.background {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock("Running in the background.")))
	}
	if c.text != "" {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(c.text)))
	}
	if c.tool != "" {
		mark := "→ "
		if c.toolDone {
			mark = "✓ "
		}
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(mark+c.tool)))
	}
	if content == nil {
		return nil
	}
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(acpsdk.ToolCallId(c.id), acpsdk.WithUpdateContent(content))}
}

func final(s acpsdk.ToolCallStatus) bool {
	return s == acpsdk.ToolCallStatusCompleted || s == acpsdk.ToolCallStatusFailed
}

// permission is the tool call of a permission request, titled with the
// agent that asks. A call not yet announced (its agent's message may still
// be on its way) is announced first, so that the request refers to a call
// the editor shows.
func (t *translator) permission(a Ask) (acpsdk.ToolCallUpdate, []acpsdk.SessionUpdate) {
	var pre []acpsdk.SessionUpdate
	c := t.calls[a.ToolUseID]
	if c == nil || c.hidden {
		agentType := ""
		if a.ParentToolUseID != "" {
			agentType = a.Agent
		}
		c = &toolCall{id: a.ToolUseID, name: a.Tool, status: acpsdk.ToolCallStatusPending, parent: a.ParentToolUseID}
		t.calls[a.ToolUseID] = c
		pre = append(pre, acpsdk.SessionUpdate{ToolCall: t.start(c, a.Input, agentType, a.AgentID)})
	}
	if p := t.calls[a.ParentToolUseID]; p != nil {
		pre = append(pre, t.running(p)...) // its subagent is asking: it runs
	}
	p := present(a.Tool, a.Input, t.cwd)
	if ch := a.Change; ch != nil && ch.Diff != "" && ch.Old+ch.New != "" {
		// The file before and after, not just the strings the call swaps.
		if ch.Create {
			p.diff = []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(ch.Path, ch.New)}
		} else {
			p.diff = []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(ch.Path, ch.New, ch.Old)}
		}
	}
	title, status := first(a.Agent, "main")+": "+p.title, c.status
	return acpsdk.ToolCallUpdate{
		ToolCallId: acpsdk.ToolCallId(a.ToolUseID), Title: &title, Kind: &p.kind, Status: &status,
		Locations: p.locations, Content: p.diff, RawInput: rawInput(a.Input),
	}, pre
}
