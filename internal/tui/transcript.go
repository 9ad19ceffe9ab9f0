package tui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/llm"
	"github.com/charmbracelet/x/ansi"
)

// kind is what a transcript item shows.
type kind int

const (
	kindUser kind = iota
	kindAssistant
	kindTool
	kindInfo
	kindError
	// kindNote is an event of the conversation on one line: a background
	// run that ended.
	kindNote
	// kindWelcome is the first line: the workspace and the model.
	kindWelcome
)

// item is one entry of the transcript.
type item struct {
	kind kind
	text string // the user's, the assistant's (Markdown), info or error text

	// A tool call (kindTool): its id, name, input and, once it returned,
	// its result.
	id       string
	tool     string
	input    json.RawMessage
	result   string
	isError  bool
	returned bool

	// cache is the rendering of an item that no longer changes ("" when
	// none yet); live items (streaming text, a call still running, an
	// Agent call) are rendered every time.
	cache string
}

// event takes one event of the conversation.
func (m *Model) event(e cadre.Event) {
	m.runs.Observe(e)
	if e.ParentToolUseID == "" && (e.Type == cadre.EventStreamEvent || e.Type == cadre.EventAssistant || e.Type == cadre.EventResult) {
		m.retry = nil // the model answers again, or the turn is over
	}
	switch {
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeInit && e.Init != nil:
		if e.Init.Model != "" {
			m.model = render.OneLine(e.Init.Model)
		}
		if e.Init.PermissionMode != "" {
			// Every turn starts with an init; only the first says the
			// mode the conversation opened in (Shift+Tab's cycle).
			if !m.initSeen {
				m.startMode = e.Init.PermissionMode
			}
			m.mode, m.initSeen = e.Init.PermissionMode, true
		}
		m.commands = e.Init.SlashCommands
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeCompactBoundary:
		m.items = append(m.items, &item{kind: kindInfo, text: "The conversation was compacted: older turns are now a summary."})
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeTaskStarted && e.Task != nil && e.Task.SpawnDepth <= 1 &&
		e.Task.Kind != cadre.TaskLocalBash && m.calls[e.Task.ToolUseID] == nil:
		// A run the main agent did not start with a call of its own (an
		// "@name" run): its line goes where it starts.
		it := &item{kind: kindTool, id: e.Task.ToolUseID, tool: "Agent"}
		m.calls[it.id] = it
		m.items = append(m.items, it)
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeAPIRetry && e.Retry != nil:
		if e.ParentToolUseID == "" {
			at := e.Time
			if at.IsZero() {
				at = m.cfg.Now()
			}
			m.retry, m.retryAt = e.Retry, at
		}
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeTaskNotification && e.Task != nil:
		m.finished(e.Task)
	case e.ParentToolUseID != "":
		// A subagent's message: its run's line (Activity) shows it.
	case e.Type == cadre.EventStreamEvent:
		m.partial(e.Partial)
	case e.Type == cadre.EventAssistant && e.Message != nil:
		m.busy = true
		m.assistant(e.Message)
	case e.Type == cadre.EventUser && e.Message != nil:
		m.results(e.Message)
	case e.Type == cadre.EventResult && e.Result != nil && m.shell != nil:
		// A "!command" turn: its result is the command's output.
		it := m.shell
		it.result, it.isError, it.returned = e.Result.Result, e.Result.IsError, true
		if e.Result.IsError && len(e.Result.Errors) > 0 {
			it.result = e.Result.Errors[0]
		}
		m.shell = nil
		m.stats = m.conv.Stats()
		m.turnEnded()
	case e.Type == cadre.EventResult && e.Result != nil:
		if e.Result.IsError {
			reason := "the turn failed"
			if len(e.Result.Errors) > 0 {
				reason = render.Clean(e.Result.Errors[0])
			}
			m.items = append(m.items, &item{kind: kindError, text: reason})
		}
		if !e.Result.IsError && strings.TrimSpace(e.Result.Result) != "" && !m.answered() {
			// An "@name" turn's answer is its agent's: no reply of the
			// main agent showed it.
			m.items = append(m.items, &item{kind: kindAssistant, text: e.Result.Result})
		}
		m.stats = m.conv.Stats()
		m.turnEnded()
	}
	m.refresh()
}

// welcome is the first line of the transcript: where cadre runs, on
// which model, and where help is.
// A directory too long for the line gives up its beginning ("…/shop"),
// so that the model stays whole.
func (m *Model) welcome() string {
	head := render.Heading.Render("✻ cadre")
	model := ""
	if m.model != "" {
		model = " · " + m.model
	}
	if dir := render.OneLine(m.cfg.Cwd); dir != "" {
		room := m.width - ansi.StringWidth(head) - len(" · ") - ansi.StringWidth(model)
		if over := ansi.StringWidth(dir) - room; over > 0 && room > 1 {
			dir = ansi.TruncateLeft(dir, over+1, "…")
		}
		head += " · " + dir
	}
	head += model
	return ansi.Truncate(head, m.width, "…") + "\n" + render.Dim.Render(ansi.Truncate("  /help for commands · ? for shortcuts · @ mentions an agent or a file", m.width, "…"))
}

// finished announces a background run of the main agent that ended: the
// main agent is told of it and speaks again, and the user sees why. A
// foreground run's end shows on its own line, under its call.
func (m *Model) finished(t *cadre.TaskEvent) {
	r, ok := m.runs.Run(t.ToolUseID)
	if !ok || !r.Background || r.Depth > 1 || !r.Done() || m.announced[t.ToolUseID] {
		return
	}
	m.announced[t.ToolUseID] = true
	what := "finished"
	if r.Status != cadre.TaskCompleted {
		what = string(r.Status)
	}
	name := render.OneLine(r.Description)
	if name == "" {
		name = render.OneLine(r.AgentType)
	}
	m.items = append(m.items, &item{kind: kindNote, text: fmt.Sprintf("● %s %s · %s · %s tokens", name, what, render.Elapsed(r.Elapsed(m.cfg.Now())), render.Count(r.Tokens)), isError: r.Status != cadre.TaskCompleted})
}

// replay shows a resumed session's transcript: its messages as they were,
// tool calls folded, nothing live.
func (m *Model) replay(entries []cadre.TranscriptEntry) {
	if len(entries) == 0 {
		return
	}
	for _, e := range entries {
		msg := e.Message
		switch {
		case e.Type == "summary" || (e.Type == "system" && e.Subtype == cadre.SubtypeCompactBoundary):
			m.items = append(m.items, &item{kind: kindInfo, text: "(older turns were compacted into a summary)"})
		case msg == nil:
		case e.Type == "assistant":
			m.assistant(msg)
		case e.Type == "user":
			m.results(msg)
			if text := strings.TrimSpace(typed(msg)); text != "" {
				if strings.HasPrefix(text, "<task-notification>") {
					m.items = append(m.items, &item{kind: kindInfo, text: "(a background task's notification)"})
				} else {
					m.items = append(m.items, &item{kind: kindUser, text: text})
				}
			}
		}
	}
	for _, it := range m.items {
		if it.kind == kindTool && !it.returned {
			// A call the session ended before it returned.
			it.returned, it.result = true, "(no result recorded)"
		}
	}
	m.items = append(m.items, &item{kind: kindInfo, text: "— resumed: new messages continue this session —"})
}

// typed is the text a user message was typed with: without the blocks
// that attached files to it ("@path"), which the model read, not the user.
func typed(msg *llm.Message) string {
	var b strings.Builder
	for _, c := range msg.Content {
		if c.Type == llm.BlockText && !c.PerTurn && !strings.HasPrefix(c.Text, "<system-reminder>") {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// answered reports whether the main agent's text shows after the last
// user message.
func (m *Model) answered() bool {
	for i := len(m.items) - 1; i >= 0; i-- {
		switch m.items[i].kind {
		case kindAssistant:
			return true
		case kindUser:
			return false
		}
	}
	return false
}

// partial takes a piece of the main agent's reply as it streams.
func (m *Model) partial(p map[string]any) {
	m.busy = true
	switch p["type"] {
	case "message_start":
		m.stream, m.thinking = nil, false
	case "content_block_start":
		b, _ := p["content_block"].(map[string]any)
		m.thinking = b["type"] == "thinking"
	case "content_block_delta":
		d, _ := p["delta"].(map[string]any)
		if d["type"] != "text_delta" {
			return
		}
		text, _ := d["text"].(string)
		if m.stream == nil {
			m.stream = &item{kind: kindAssistant}
			m.items = append(m.items, m.stream)
		}
		m.stream.text += text
	}
}

// assistant takes a whole reply of the main agent: its text replaces what
// streamed, and its tool calls follow.
func (m *Model) assistant(msg *llm.Message) {
	m.thinking = false
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == llm.BlockText {
			text.WriteString(b.Text)
		}
	}
	if s := m.stream; s != nil {
		s.text = text.String()
		m.stream = nil
	} else if strings.TrimSpace(text.String()) != "" {
		m.items = append(m.items, &item{kind: kindAssistant, text: text.String()})
	}
	for _, b := range msg.ToolUses() {
		it := &item{kind: kindTool, id: b.ID, tool: b.Name, input: b.Input}
		m.calls[b.ID] = it
		m.items = append(m.items, it)
	}
}

// results takes the main agent's tool results.
func (m *Model) results(msg *llm.Message) {
	for _, b := range msg.Content {
		if b.Type != llm.BlockToolResult {
			continue
		}
		if it := m.calls[b.ToolUseID]; it != nil {
			it.result, it.isError, it.returned, it.cache = render.Clean(b.ResultText()), b.IsError, true, ""
		}
	}
}

// transcript renders every item for the viewport.
func (m *Model) transcript() string {
	var b strings.Builder
	m.rows = map[string]int{}
	for i := 0; i < len(m.items); i++ {
		it := m.items[i]
		if i > 0 {
			b.WriteString("\n")
			// A blank line before each message sets turns apart; tool
			// lines and notes stay with the reply they belong to.
			if it.kind == kindUser || (it.kind == kindAssistant && m.items[i-1].kind != kindAssistant) {
				b.WriteString("\n")
			}
		}
		if m.spawned(it) {
			// Agent calls in a row (one reply starting several) share
			// one cap on the run lines shown.
			j := i
			for j+1 < len(m.items) && m.spawned(m.items[j+1]) {
				j++
			}
			// Where each run's line is, for the background panel.
			m.rowBase = strings.Count(b.String(), "\n")
			b.WriteString(m.renderSpawns(m.items[i : j+1]))
			i = j
			continue
		}
		b.WriteString(m.render(it))
	}
	return b.String()
}

// render renders one item, from its cache when it no longer changes.
func (m *Model) render(it *item) string {
	if it.cache != "" {
		return it.cache
	}
	w := m.width
	var out string
	switch it.kind {
	case kindUser:
		out = render.User.Render(ansi.Wrap("› "+render.Clean(it.text), w, ""))
	case kindAssistant:
		out = render.Markdown(it.text, w)
		if it == m.stream {
			return out
		}
	case kindInfo:
		out = render.Dim.Render(ansi.Wrap(it.text, w, ""))
	case kindError:
		out = render.Err.Render(ansi.Wrap("✗ "+render.Clean(it.text), w, ""))
	case kindWelcome:
		// Live: the model changes with the init event and /model.
		return m.welcome()
	case kindNote:
		style := render.OK
		if it.isError {
			style = render.Err
		}
		out = style.Render(ansi.Truncate(it.text, w, "…"))
	case kindTool:
		out = m.renderTool(it)
		if !it.returned {
			return out
		}
	}
	it.cache = out
	return out
}

// renderTool is a call on one line, then its result folded to one line.
func (m *Model) renderTool(it *item) string {
	mark := render.Tool.Render("⏺")
	if !it.returned {
		mark = render.Tool.Render(render.Spinner(m.frame))
	}
	line := mark + " " + ansi.Truncate(render.Tool.Render(render.OneLine(it.tool))+render.Dim.Render(render.Hint(it.input)), m.width-2, "…")
	if !it.returned {
		return line
	}
	if spawnTools[it.tool] && !it.isError && !m.expanded {
		// A subagent's answer as its caller got it (framed for the model)
		// says little in one line: how long it is, and how to read it.
		n := strings.Count(strings.TrimSpace(it.result), "\n") + 1
		return line + "\n" + render.Dim.Render(fmt.Sprintf("  ⎿ the agent answered (%d lines, ctrl+o shows)", n))
	}
	return line + "\n" + render.Result(it.result, it.isError, m.width, m.expanded)
}

// spawned reports whether it is a call that started a subagent run: its
// line is the run's (whatever the tool's name in the agent's profile).
func (m *Model) spawned(it *item) bool {
	if it.kind != kindTool {
		return false
	}
	_, ok := m.runs.Run(it.id)
	return ok || spawnTools[it.tool]
}

// spawnTools are the tools that start subagents, in every profile: a call
// of one is grouped with its siblings before its run has started (runs
// may wait for a concurrency slot).
var spawnTools = map[string]bool{"Agent": true, "Task": true, "task": true, "agent_spawn": true, "sessions_spawn": true}

// maxRunLines caps the run lines shown under calls whose runs have all
// ended, and is the least a live fan-out gets: more runs are summed up on
// one line, so twenty in parallel stay readable.
const maxRunLines = 8

// runBudget is how many run lines a fan-out with runs still going may
// take: the rows the transcript has, less two for the reply above them.
func (m *Model) runBudget() int {
	free := m.height - lipgloss.Height(m.bottom()) - 2
	return max(maxRunLines, free)
}

// rank orders runs for the screen: running first, then those waiting to
// start, then those that ended, which are the first to be summed up.
func (m *Model) rank(it *item) int {
	r, ok := m.runs.Run(it.id)
	switch {
	case ok && !r.Done():
		return 0
	case !ok && !it.returned:
		return 1
	}
	return 2
}

// renderSpawns are Agent calls, each with its run under it: live while
// it runs (its children under it, indented), one summary line once it
// ended. Running runs come first; past the budget of lines (the free
// rows while any runs, maxRunLines once all ended) the rest are summed up
// on one line.
func (m *Model) renderSpawns(items []*item) string {
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b *item) int { return cmp.Compare(m.rank(a), m.rank(b)) })
	limit := maxRunLines
	if m.rank(items[0]) < 2 {
		limit = m.runBudget()
	}
	var b strings.Builder
	shown := 0
	for i, it := range items {
		if shown >= limit {
			b.WriteString(m.summary(items[i:], 0) + "\n")
			break
		}
		r, ok := m.runs.Run(it.id)
		if !ok {
			// Not started yet, or refused before it ran.
			b.WriteString(m.renderTool(it) + "\n")
			shown++
			continue
		}
		m.runLines(&b, r, 0, &shown, limit)
	}
	return strings.TrimRight(b.String(), "\n")
}

// summary is one line for the calls not shown one by one.
func (m *Model) summary(items []*item, indent int) string {
	var running, waiting, done int
	for _, it := range items {
		r, ok := m.runs.Run(it.id)
		switch {
		case ok && r.Done(), !ok && it.returned:
			done++
		case ok:
			running++
		default:
			waiting++
		}
	}
	text := fmt.Sprintf("… %d more subagents (%d running", len(items), running)
	if waiting > 0 {
		text += fmt.Sprintf(", %d starting", waiting)
	}
	text += fmt.Sprintf(", %d done)", done)
	return strings.Repeat("  ", indent) + render.Dim.Render(text)
}

// runLines writes r's line, then its children's (running first),
// depth-first; shown counts the run lines written under the call, and
// past limit the rest are summed up.
func (m *Model) runLines(b *strings.Builder, r cadre.ActivityRun, indent int, shown *int, limit int) {
	m.rows[r.ToolUseID] = m.rowBase + strings.Count(b.String(), "\n")
	b.WriteString(m.runLine(r, indent))
	b.WriteString("\n")
	*shown++
	kids := m.runs.Children(r.ToolUseID)
	slices.SortStableFunc(kids, func(a, b cadre.ActivityRun) int { return cmp.Compare(boolRank(a.Done()), boolRank(b.Done())) })
	for i, k := range kids {
		if *shown >= limit {
			rest := make([]*item, 0, len(kids)-i)
			for _, k := range kids[i:] {
				rest = append(rest, &item{id: k.ToolUseID})
			}
			b.WriteString(m.summary(rest, indent+1) + "\n")
			return
		}
		m.runLines(b, k, indent+1, shown, limit)
	}
}

// boolRank puts false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runLine is one run on one line: type, description, current tool or
// outcome, elapsed time, tokens.
func (m *Model) runLine(r cadre.ActivityRun, indent int) string {
	now := m.cfg.Now()
	name := render.OneLine(r.AgentType)
	if name == "" {
		name = "agent"
	}
	var mark, state string
	switch {
	case !r.Done():
		mark = render.Tool.Render(render.Spinner(m.frame))
		state = "thinking"
		if r.Tool != "" {
			state = render.OneLine(r.Tool) + render.Hint(r.Input)
		}
		if r.Background {
			state = "background · " + state
		}
	case r.Status == cadre.TaskCompleted:
		mark = render.OK.Render("✓")
		state = "done"
	default:
		mark = render.Err.Render("✗")
		state = string(r.Status)
	}
	figures := fmt.Sprintf(" · %s · %s tokens", render.Elapsed(r.Elapsed(now)), render.Count(r.Tokens))
	if r.Done() {
		figures = fmt.Sprintf(" · %d tool uses%s", r.ToolUses, figures)
	}
	head := strings.Repeat("  ", indent) + mark + " " + render.AgentStyle(r.Color).Render(name)
	if d := render.OneLine(r.Description); d != "" {
		head += " " + d
	}
	return ansi.Truncate(head+render.Dim.Render(" — "+state+figures), m.width, "…")
}
