package tui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"
	"unicode"

	"charm.land/lipgloss/v2"
	"github.com/cadre-dev/cadre"
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

var (
	styleUser    = lipgloss.NewStyle().Bold(true)
	styleDim     = lipgloss.NewStyle().Faint(true)
	styleError   = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleTool    = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	styleOK      = lipgloss.NewStyle().Foreground(lipgloss.Green)
	styleWarn    = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	styleQueued  = lipgloss.NewStyle().Faint(true).Italic(true)
	styleHeading = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Magenta)
)

// spinner frames, one per tick while something runs.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// event takes one event of the conversation.
func (m *Model) event(e cadre.Event) {
	m.runs.Observe(e)
	if e.ParentToolUseID == "" && (e.Type == cadre.EventStreamEvent || e.Type == cadre.EventAssistant || e.Type == cadre.EventResult) {
		m.retry = nil // the model answers again, or the turn is over
	}
	switch {
	case e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeInit && e.Init != nil:
		if e.Init.Model != "" {
			m.model = oneLine(e.Init.Model)
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
				reason = clean(e.Result.Errors[0])
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
	head := styleHeading.Render("✻ cadre")
	model := ""
	if m.model != "" {
		model = " · " + m.model
	}
	if dir := oneLine(m.cfg.Cwd); dir != "" {
		room := m.width - ansi.StringWidth(head) - len(" · ") - ansi.StringWidth(model)
		if over := ansi.StringWidth(dir) - room; over > 0 && room > 1 {
			dir = ansi.TruncateLeft(dir, over+1, "…")
		}
		head += " · " + dir
	}
	head += model
	return ansi.Truncate(head, m.width, "…") + "\n" + styleDim.Render(ansi.Truncate("  /help for commands · ? for shortcuts · @ mentions an agent or a file", m.width, "…"))
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
	name := oneLine(r.Description)
	if name == "" {
		name = oneLine(r.AgentType)
	}
	m.items = append(m.items, &item{kind: kindNote, text: fmt.Sprintf("● %s %s · %s · %s tokens", name, what, elapsed(r.Elapsed(m.cfg.Now())), count(r.Tokens)), isError: r.Status != cadre.TaskCompleted})
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
			it.result, it.isError, it.returned, it.cache = clean(b.ResultText()), b.IsError, true, ""
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
		out = styleUser.Render(ansi.Wrap("› "+clean(it.text), w, ""))
	case kindAssistant:
		out = renderMarkdown(it.text, w)
		if it == m.stream {
			return out
		}
	case kindInfo:
		out = styleDim.Render(ansi.Wrap(it.text, w, ""))
	case kindError:
		out = styleError.Render(ansi.Wrap("✗ "+clean(it.text), w, ""))
	case kindWelcome:
		// Live: the model changes with the init event and /model.
		return m.welcome()
	case kindNote:
		style := styleOK
		if it.isError {
			style = styleError
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
	mark := styleTool.Render("⏺")
	if !it.returned {
		mark = styleTool.Render(spinner[m.frame%len(spinner)])
	}
	line := mark + " " + ansi.Truncate(styleTool.Render(oneLine(it.tool))+styleDim.Render(hint(it.input)), m.width-2, "…")
	if !it.returned {
		return line
	}
	if spawnTools[it.tool] && !it.isError && !m.expanded {
		// A subagent's answer as its caller got it (framed for the model)
		// says little in one line: how long it is, and how to read it.
		n := strings.Count(strings.TrimSpace(it.result), "\n") + 1
		return line + "\n" + styleDim.Render(fmt.Sprintf("  ⎿ the agent answered (%d lines, ctrl+o shows)", n))
	}
	return line + "\n" + resultLines(it.result, it.isError, m.width, m.expanded)
}

// maxExpanded bounds the lines of one result shown unfolded (Ctrl+O).
const maxExpanded = 20

// folded is a result on one line: its first line and how many follow.
func folded(result string, isError bool, width int) string {
	return fold(result, isError, width, false, "")
}

// resultLines is a result in the conversation's transcript: folded, saying
// Ctrl+O unfolds it, or unfolded to its first maxExpanded lines.
func resultLines(result string, isError bool, width int, expanded bool) string {
	return fold(result, isError, width, expanded, ", ctrl+o shows")
}

// fold is a result on one line, or its first maxExpanded lines; more
// follows the count of lines folded.
func fold(result string, isError bool, width int, expanded bool, more string) string {
	result = strings.TrimSpace(clean(result))
	lines := strings.Split(result, "\n")
	style := styleDim
	if isError {
		style = styleError
	}
	if expanded && len(lines) > 1 {
		n := min(len(lines), maxExpanded)
		out := make([]string, 0, n+1)
		for i, l := range lines[:n] {
			lead := "    "
			if i == 0 {
				lead = "  ⎿ "
			}
			out = append(out, style.Render(ansi.Truncate(lead+strings.TrimRight(l, " \t\r"), width, "…")))
		}
		if len(lines) > n {
			out = append(out, style.Render(fmt.Sprintf("    … %d more lines", len(lines)-n)))
		}
		return strings.Join(out, "\n")
	}
	first := strings.TrimSpace(lines[0])
	if first == "" {
		first = "(no output)"
	}
	if len(lines) > 1 {
		more = fmt.Sprintf(" (+%d lines%s)", len(lines)-1, more)
	} else {
		more = ""
	}
	return style.Render(ansi.Truncate("  ⎿ "+first, width-ansi.StringWidth(more), "…") + more)
}

// hintKeys are the input fields worth showing after a tool's name, best
// first.
var hintKeys = []string{"file_path", "notebook_path", "command", "pattern", "url", "query", "path", "description", "prompt"}

// hint is a call's input in short: its most telling field.
func hint(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range hintKeys {
		if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
			return "(" + oneLine(s) + ")"
		}
	}
	return ""
}

// oneLine is s on one line, cleaned.
func oneLine(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

// clean makes text from outside — the model, tools, files, agent
// definitions — safe to draw: escape sequences are removed (they would
// drive the terminal, not show: clear it, retitle it, move the cursor
// over the input), other control characters but newlines become spaces,
// and tabs four spaces.
func clean(s string) string {
	s = ansi.Strip(s)
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return ' '
	}, s)
	return strings.ReplaceAll(s, "\t", "    ")
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
	return strings.Repeat("  ", indent) + styleDim.Render(text)
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
	name := oneLine(r.AgentType)
	if name == "" {
		name = "agent"
	}
	var mark, state string
	switch {
	case !r.Done():
		mark = styleTool.Render(spinner[m.frame%len(spinner)])
		state = "thinking"
		if r.Tool != "" {
			state = oneLine(r.Tool) + hint(r.Input)
		}
		if r.Background {
			state = "background · " + state
		}
	case r.Status == cadre.TaskCompleted:
		mark = styleOK.Render("✓")
		state = "done"
	default:
		mark = styleError.Render("✗")
		state = string(r.Status)
	}
	figures := fmt.Sprintf(" · %s · %s tokens", elapsed(r.Elapsed(now)), count(r.Tokens))
	if r.Done() {
		figures = fmt.Sprintf(" · %d tool uses%s", r.ToolUses, figures)
	}
	head := strings.Repeat("  ", indent) + mark + " " + agentStyle(r.Color).Render(name)
	if d := oneLine(r.Description); d != "" {
		head += " " + d
	}
	return ansi.Truncate(head+styleDim.Render(" — "+state+figures), m.width, "…")
}

// agentColors are the colors an agent file may name, as Claude Code's.
var agentColors = map[string]color.Color{
	"red": lipgloss.Red, "green": lipgloss.Green, "yellow": lipgloss.Yellow, "blue": lipgloss.Blue,
	"purple": lipgloss.Magenta, "cyan": lipgloss.Cyan, "orange": lipgloss.Color("208"), "pink": lipgloss.Color("205"),
}

// agentStyle shows an agent's name in its file's color: a named one, or
// OpenCode's #RRGGBB; the tool color otherwise.
func agentStyle(c string) lipgloss.Style {
	if col, ok := agentColors[strings.ToLower(c)]; ok {
		return lipgloss.NewStyle().Foreground(col).Bold(true)
	}
	if len(c) == 7 && c[0] == '#' {
		return lipgloss.NewStyle().Foreground(lipgloss.Color(c)).Bold(true)
	}
	return styleTool
}

// elapsed is a duration as people read it: 4s, 1m05s.
func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// count is a token count in short: 950, 12.3k, 1.2M.
func count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// decodeFields are an input object's fields as name and text, in the
// order hintKeys ranks them, then by name.
func decodeFields(input json.RawMessage) [][2]string {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	rank := func(k string) int {
		if i := slices.Index(hintKeys, k); i >= 0 {
			return i
		}
		return len(hintKeys)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([][2]string, 0, len(names))
	for _, k := range names {
		var s string
		if json.Unmarshal(in[k], &s) != nil {
			s = string(in[k])
		}
		out = append(out, [2]string{k, s})
	}
	return out
}
