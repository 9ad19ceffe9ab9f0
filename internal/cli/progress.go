package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

const (
	// defaultWidth is used when the terminal does not say how wide it is.
	defaultWidth = 100
	// maxLive bounds the live block: moving the cursor up past the top of
	// the screen is clamped by terminals, so a block taller than the screen
	// could never be redrawn in place.
	maxLive = 8
	// hintLen bounds the argument shown after a tool's name.
	hintLen = 40
	// reasonLen bounds the failure reason on a plain-mode line.
	reasonLen = 120
)

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// hintKeys are the tool input fields worth showing after a tool's name, best
// first. pathKeys among them are shortened from the left: a path's tail says
// more than its head.
var (
	hintKeys = []string{"file_path", "notebook_path", "pattern", "command", "url", "query", "path", "description"}
	pathKeys = map[string]bool{"file_path": true, "notebook_path": true, "path": true}
)

// progress shows the subagents of a run on stderr while they work: on a
// terminal as a live block of lines redrawn in place, elsewhere as plain
// lines appended as things happen. It never fails the run: write errors only
// stop further output.
type progress struct {
	w   io.Writer
	tty bool
	// color shows agents in their colours (on a terminal, without
	// NO_COLOR).
	color bool
	now   func() time.Time
	cols  func() int

	// mu guards everything below: Event and Tick come from two goroutines.
	mu sync.Mutex
	// runs holds the running subagents keyed by the id of the tool call that
	// started them (their events' ParentToolUseID); order is their start
	// order, for a stable display.
	runs  map[string]*run
	order []*run
	// owner maps each tool call seen to the tag of the agent that made it
	// ("" for the main agent), so a child's run can find its parent's.
	owner map[string]string
	// background marks Agent calls run in the background: their tool result
	// arrives at launch, and their end is a task_notification instead.
	background map[string]bool
	// ended keeps late events of a finished run from starting it again.
	ended map[string]bool
	// number holds the number of each Agent call among the calls of its
	// subagent type, in the order the calls were made, and count how many
	// of each type there were: the second run of a type is "#2" on every
	// line about it.
	number map[string]int
	count  map[string]int
	frame  int
	drawn  int // live lines currently on screen (TTY)
	closed bool
	broken bool // a write failed; stay quiet from then on
}

// run is one subagent run being tracked.
type run struct {
	key       string
	parent    *run
	depth     int
	agentType string
	label     string // agentType, numbered from the second run of its type: "general-purpose #2"
	color     string // the agent file's color, shown on a terminal
	desc      string
	start     time.Time
	tokens    int64
	toolUses  int
	tool      string // the newest tool call with its hint; "" while answering
}

// newProgress returns a display writing to w: the live block when tty, plain
// lines otherwise. now is the clock for elapsed times and for events without
// a time.
func newProgress(w io.Writer, tty bool, now func() time.Time) *progress {
	return &progress{
		w: w, tty: tty, color: tty, now: now,
		cols: func() int {
			if n := terminalWidth(w); n > 0 {
				return n
			}
			return defaultWidth
		},
		runs:       map[string]*run{},
		owner:      map[string]string{},
		background: map[string]bool{},
		ended:      map[string]bool{},
		number:     map[string]int{},
		count:      map[string]int{},
	}
}

// colorAllowed reports whether output may be coloured: not when NO_COLOR
// is set to anything but "" (no-color.org).
func colorAllowed(getenv func(string) string) bool { return getenv("NO_COLOR") == "" }

// isTerminalWriter reports whether w is a character device, where the live
// block can be drawn.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Event takes the next event of the run. The main agent's result ends the
// display (as Close does), so the final answer is never printed inside the
// live block.
func (p *progress) Event(e cadre.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if e.Type == cadre.EventResult && e.ParentToolUseID == "" {
		p.closeLocked()
		return
	}
	at := e.Time
	if at.IsZero() {
		at = p.now()
	}
	var lines []string // plain lines, or permanent lines above the live block
	changed := false
	// A foreground run's end is its tool result; its task_notification
	// says nothing more.
	if e.Type == cadre.EventSystem && e.Subtype == cadre.SubtypeTaskNotification && e.Task != nil && p.background[e.Task.ToolUseID] {
		if id := e.Task.ToolUseID; id != "" {
			if r := p.runs[id]; r != nil {
				reason := e.Task.Summary
				if reason == "" {
					reason = string(e.Task.Status)
				}
				lines = append(lines, p.finish(r, e.Task.Status != cadre.TaskCompleted, reason, at))
				changed = true
			}
			delete(p.background, id)
			delete(p.owner, id)
		}
	}
	if e.Message != nil && (e.Type == cadre.EventUser || e.Type == cadre.EventAssistant) {
		// A tool result may end a child run: that of the call that started it.
		for _, b := range e.Message.Content {
			if b.Type != llm.BlockToolResult || p.background[b.ToolUseID] {
				continue
			}
			if r := p.runs[b.ToolUseID]; r != nil {
				lines = append(lines, p.finish(r, b.IsError, b.ResultText(), at))
				changed = true
			}
			delete(p.owner, b.ToolUseID)
		}
		if e.ParentToolUseID == "" {
			p.noteCalls(e, "")
		} else if !p.ended[e.ParentToolUseID] {
			r := p.runs[e.ParentToolUseID]
			if r == nil {
				r = p.begin(e, at)
				if !p.tty {
					lines = append(lines, startLine(r))
				}
			}
			if e.Type == cadre.EventAssistant {
				lines = append(lines, p.step(r, e)...)
			}
			changed = true
		}
	}
	if e.Type == cadre.EventUser && e.Todos != nil {
		tag := "main"
		if e.ParentToolUseID != "" {
			tag = clean(e.AgentType)
			if r := p.runs[e.ParentToolUseID]; r != nil {
				tag = chain(r)
			}
		}
		lines = append(lines, todoLine(tag, e.Todos))
		changed = true
	}
	if p.tty {
		if changed {
			p.redraw(lines)
		}
		return
	}
	p.write(lines)
}

// todoLine shows an agent's to-do list after a TodoWrite call: how far it
// is, then each step (✓ done, ▸ in progress, shown as being done, ○ to do).
func todoLine(tag string, todos []cadre.Todo) string {
	done := 0
	parts := make([]string, 0, len(todos))
	for _, t := range todos {
		switch t.Status {
		case "completed":
			done++
			parts = append(parts, "✓ "+clean(t.Content))
		case "in_progress":
			text := clean(t.ActiveForm)
			if text == "" {
				text = clean(t.Content)
			}
			parts = append(parts, "▸ "+text)
		default:
			parts = append(parts, "○ "+clean(t.Content))
		}
	}
	return fmt.Sprintf("[%s] todos %d/%d: %s", tag, done, len(todos), strings.Join(parts, "; "))
}

// ansiColors are the colors an agent file may name, as Claude Code's.
var ansiColors = map[string]string{
	"red": "31", "green": "32", "yellow": "33", "blue": "34", "purple": "35", "cyan": "36",
	"orange": "38;5;208", "pink": "38;5;205",
}

// colored is the agent's name in its color, on a terminal.
func (p *progress) colored(r *run) string {
	code, ok := ansiColors[strings.ToLower(r.color)]
	if c := r.color; !ok && len(c) == 7 && c[0] == '#' {
		// OpenCode's #RRGGBB, as a 24-bit color.
		if v, err := strconv.ParseUint(c[1:], 16, 32); err == nil {
			code, ok = fmt.Sprintf("38;2;%d;%d;%d", v>>16, v>>8&0xff, v&0xff), true
		}
	}
	if !p.color || !ok {
		return r.label
	}
	return "\x1b[" + code + "m" + r.label + "\x1b[0m"
}

// Tick advances the spinner and redraws elapsed times (TTY only).
func (p *progress) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty || p.closed || len(p.order) == 0 {
		return
	}
	p.frame++
	p.redraw(nil)
}

// Close clears the live block; later events and ticks are ignored. It may be
// called more than once.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked()
}

func (p *progress) closeLocked() {
	if p.closed {
		return
	}
	p.closed = true
	if p.tty && p.drawn > 0 {
		p.writeString(fmt.Sprintf("\x1b[%dA\x1b[J", p.drawn))
		p.drawn = 0
	}
}

// begin starts tracking the run whose first event is e.
func (p *progress) begin(e cadre.Event, at time.Time) *run {
	r := &run{key: e.ParentToolUseID, agentType: clean(e.AgentType), color: e.AgentColor, desc: clean(e.TaskDescription), start: at}
	if r.agentType == "" {
		r.agentType = "agent"
	}
	n, ok := p.number[r.key]
	if !ok {
		// Not an Agent call seen here (or one without a type): numbered as
		// it starts.
		p.count[r.agentType]++
		n = p.count[r.agentType]
	}
	r.label = r.agentType
	if n > 1 {
		r.label = fmt.Sprintf("%s #%d", r.agentType, n)
	}
	if owner := p.owner[r.key]; owner != "" {
		if parent := p.runs[owner]; parent != nil {
			r.parent, r.depth = parent, parent.depth+1
		}
	}
	p.runs[r.key] = r
	p.order = append(p.order, r)
	return r
}

// step takes an assistant message of r: its usage and tool calls. It
// returns the plain lines for the calls.
func (p *progress) step(r *run, e cadre.Event) []string {
	if e.Assistant != nil {
		u := e.Assistant.Usage
		r.tokens += u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	}
	calls := p.noteCalls(e, r.key)
	r.tool = ""
	var lines []string
	for _, b := range calls {
		r.toolUses++
		r.tool = toolLabel(b)
		if !p.tty {
			lines = append(lines, fmt.Sprintf("[%s] %s", chain(r), r.tool))
		}
	}
	return lines
}

// noteCalls records who made each tool call of e, and which Agent calls run
// in the background, and returns the calls.
func (p *progress) noteCalls(e cadre.Event, tag string) []llm.Block {
	if e.Type != cadre.EventAssistant || e.Message == nil {
		return nil
	}
	calls := e.Message.ToolUses()
	for _, b := range calls {
		p.owner[b.ID] = tag
		var in struct {
			Background bool   `json:"run_in_background"`
			Type       string `json:"subagent_type"`
		}
		if json.Unmarshal(b.Input, &in) != nil {
			continue
		}
		if in.Background {
			p.background[b.ID] = true
		}
		if typ := clean(in.Type); typ != "" && (b.Name == "Agent" || b.Name == "Task") {
			p.count[typ]++
			p.number[b.ID] = p.count[typ]
		}
	}
	return calls
}

// finish stops tracking r and returns its final line.
func (p *progress) finish(r *run, failed bool, reason string, at time.Time) string {
	delete(p.runs, r.key)
	delete(p.number, r.key)
	p.ended[r.key] = true
	for i, o := range p.order {
		if o == r {
			p.order = append(p.order[:i:i], p.order[i+1:]...)
			break
		}
	}
	d := fmtDuration(at.Sub(r.start))
	stats := fmt.Sprintf("%s, %s", fmtTokens(r.tokens), plural(r.toolUses, "tool use"))
	var outcome string
	if failed {
		outcome = fmt.Sprintf("failed after %s, %s", d, stats)
		if reason = firstLine(reason); reason != "" {
			outcome += ": " + truncate(reason, reasonLen)
		}
	} else {
		outcome = fmt.Sprintf("done in %s, %s", d, stats)
	}
	if !p.tty {
		return fmt.Sprintf("[%s] %s", chain(r), outcome)
	}
	mark := "✓"
	if failed {
		mark = "✗"
	}
	return indent(r.depth) + join(mark+" "+p.colored(r), r.desc, outcome)
}

// redraw replaces the live block with lines (permanent, printed above it)
// and the current live lines, in a single write so that no other output can
// land inside a half-drawn block.
func (p *progress) redraw(lines []string) {
	width := p.cols() - 1 // writing the last column makes some terminals wrap
	live := p.liveLines()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	for _, l := range append(lines, live...) {
		b.WriteString("\r\x1b[2K")
		b.WriteString(truncate(l, width))
		b.WriteByte('\n')
	}
	b.WriteString("\x1b[J")
	p.drawn = len(live)
	p.writeString(b.String())
}

// liveLines renders the running runs, each child under its parent.
func (p *progress) liveLines() []string {
	var out []string
	var add func(parent *run)
	add = func(parent *run) {
		for _, r := range p.order {
			// A run whose parent is no longer running is shown at the top.
			top := r.parent == nil || p.runs[r.parent.key] == nil
			if (parent == nil && top) || (parent != nil && r.parent == parent) {
				out = append(out, p.liveLine(r))
				add(r)
			}
		}
	}
	add(nil)
	if len(out) > maxLive {
		more := len(out) - (maxLive - 1)
		out = append(out[:maxLive-1], fmt.Sprintf("  … and %d more running", more))
	}
	return out
}

func (p *progress) liveLine(r *run) string {
	frame := string(spinner[p.frame%len(spinner)])
	return indent(r.depth) + join(frame+" "+p.colored(r), r.desc,
		fmtDuration(p.now().Sub(r.start)), fmtTokens(r.tokens), r.tool)
}

func (p *progress) write(lines []string) {
	if len(lines) == 0 {
		return
	}
	p.writeString(strings.Join(lines, "\n") + "\n")
}

func (p *progress) writeString(s string) {
	if p.broken {
		return
	}
	if _, err := io.WriteString(p.w, s); err != nil {
		p.broken = true
	}
}

func startLine(r *run) string {
	if r.desc == "" {
		return fmt.Sprintf("[%s] started", chain(r))
	}
	return fmt.Sprintf("[%s] started: %s", chain(r), r.desc)
}

// chain names r with its ancestors: "reviewer > general-purpose".
func chain(r *run) string {
	var names []string
	for ; r != nil; r = r.parent {
		names = append(names, r.label)
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteString(names[i])
		if i > 0 {
			b.WriteString(" > ")
		}
	}
	return b.String()
}

// toolLabel is a tool call's name and a short hint of its argument.
func toolLabel(b llm.Block) string {
	name := clean(b.Name)
	var in map[string]any
	if json.Unmarshal(b.Input, &in) != nil {
		return name
	}
	for _, k := range hintKeys {
		s, _ := in[k].(string)
		if s = clean(s); s == "" {
			continue
		}
		if pathKeys[k] {
			s = truncateLeft(s, hintLen)
		} else {
			s = truncate(s, hintLen)
		}
		return name + " " + s
	}
	return name
}

// join puts two spaces between the non-empty parts.
func join(parts ...string) string {
	var kept []string
	for _, s := range parts {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, "  ")
}

func indent(depth int) string { return strings.Repeat("  ", depth) }

// clean makes s safe for one line of a terminal: control characters (escape
// sequences, newlines) become spaces and runs of spaces one.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clean(s)
}

// truncate shortens s to n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	if n <= 1 {
		return string(rs[:max(n, 0)])
	}
	return strings.TrimRight(string(rs[:n-1]), " ") + "…"
}

// truncateLeft shortens s to n runes, keeping its end.
func truncateLeft(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return "…" + string(rs[len(rs)-(n-1):])
}

func fmtDuration(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

func fmtTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d tokens", n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk tokens", float64(n)/1e3)
	case n < 999_500:
		return fmt.Sprintf("%.0fk tokens", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM tokens", float64(n)/1e6)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
