package sessiontree

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/cadre-dev/cadre/llm"
	"github.com/charmbracelet/x/ansi"
)

// Source reads the sessions of a tree; *cadre.Runtime is one.
type Source interface {
	SessionTree(ctx context.Context, id string) (cadre.SessionTree, error)
	WatchSession(ctx context.Context, id string) iter.Seq2[cadre.Event, error]
}

// Send gives text to the subagent whose session is id, with
// SendMessage's meaning (cadre.Conversation.SendSubagent), and says what
// became of it.
type Send func(ctx context.Context, id, text string) (string, error)

// Screen shows one session of a tree.
type Screen struct {
	ctx  context.Context
	src  Source
	send Send // nil: the conversation cannot message its subagents

	id     string
	tree   cadre.SessionTree
	err    string // why the tree or the transcript could not be read
	items  []treeItem
	sel    int // the selected child
	back   int // lines scrolled up from the end (0 follows the end)
	height int // the window's, as last drawn

	// The watch of the session's transcript: a goroutine reading
	// Source.WatchSession into events, ended by cancel; gen tells the
	// messages of an earlier watch from the current one's.
	gen    int
	cancel context.CancelFunc
	wg     sync.WaitGroup
	events chan treeEventMsg

	compose screen.Compose // a message to the session shown
}

// treeItem is one transcript entry, rendered once per width.
type treeItem struct {
	ev    cadre.Event
	width int
	text  string
}

// Messages of the tree screen: a loaded tree, and a transcript event.
type (
	treeLoadedMsg struct {
		gen  int
		tree cadre.SessionTree
		err  error
	}
	treeEventMsg struct {
		gen  int
		ev   cadre.Event
		err  error
		done bool // the watch ended
	}
	treeSentMsg struct {
		gen   int
		reply string
		err   error
	}
)

// New returns a screen at session id; ctx bounds everything it does.
func New(ctx context.Context, src Source, send Send, id string) *Screen {
	return &Screen{ctx: ctx, src: src, send: send, id: id, compose: screen.NewCompose("what the agent should read next (Enter sends, Esc cancels)")}
}

// ID is the session shown.
func (t *Screen) ID() string { return t.id }

// open starts showing session id: its tree, and its transcript followed
// live. The watch of the session shown before ends first.
func (t *Screen) open(id string) tea.Cmd {
	t.Close()
	t.gen++
	t.id, t.items, t.err, t.sel, t.back = id, nil, "", 0, 0
	t.compose.Reset()
	t.tree = cadre.SessionTree{}
	ctx, cancel := context.WithCancel(t.ctx)
	t.cancel = cancel
	events := make(chan treeEventMsg)
	t.events = events
	gen, src := t.gen, t.src
	t.wg.Go(func() {
		defer close(events)
		for ev, err := range src.WatchSession(ctx, id) {
			select {
			case events <- treeEventMsg{gen: gen, ev: ev, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	})
	return tea.Batch(t.Load(), t.Next())
}

// Close ends the watch and waits for its goroutine.
func (t *Screen) Close() {
	if t.cancel != nil {
		t.cancel()
		t.wg.Wait()
		t.cancel = nil
	}
}

// Load reads the session's place in its tree.
func (t *Screen) Load() tea.Cmd {
	gen, id, src, ctx := t.gen, t.id, t.src, t.ctx
	return func() tea.Msg {
		tree, err := src.SessionTree(ctx, id)
		return treeLoadedMsg{gen: gen, tree: tree, err: err}
	}
}

// Next waits for the watch's next event.
func (t *Screen) Next() tea.Cmd {
	gen, events := t.gen, t.events
	return func() tea.Msg {
		msg, ok := <-events
		if !ok {
			return treeEventMsg{gen: gen, done: true}
		}
		return msg
	}
}

func (t *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case StartMsg:
		if msg.s == t {
			return t, t.open(t.id)
		}
	case treeLoadedMsg:
		if msg.gen != t.gen {
			return t, nil
		}
		if msg.err != nil {
			t.err = msg.err.Error()
			return t, nil
		}
		t.tree = msg.tree
		t.sel = min(t.sel, max(len(t.tree.Children)-1, 0))
	case treeEventMsg:
		if msg.gen != t.gen || msg.done {
			return t, nil
		}
		if msg.err != nil {
			t.err = msg.err.Error()
			return t, nil
		}
		t.items = append(t.items, treeItem{ev: msg.ev})
		// A new message may come with a new child or a changed status.
		return t, tea.Batch(t.Next(), t.Load())
	case treeSentMsg:
		if msg.gen != t.gen {
			return t, nil
		}
		if msg.err != nil {
			t.compose.Note = "✗ " + msg.err.Error()
		} else {
			t.compose.Note = msg.reply
		}
	case tea.PasteMsg:
		if t.compose.Typing() {
			return t, t.typed(msg)
		}
	case tea.KeyPressMsg:
		if t.compose.Typing() {
			return t, t.typed(msg)
		}
		return t, t.key(msg)
	}
	return t, nil
}

// key takes a key while browsing.
func (t *Screen) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "q":
		t.Close()
		return screen.Pop
	case "up", "k":
		t.sel = max(t.sel-1, 0)
	case "down", "j":
		t.sel = min(t.sel+1, max(len(t.tree.Children)-1, 0))
	case "enter", "c":
		if len(t.tree.Children) > 0 {
			return t.open(t.tree.Children[t.sel].ID)
		}
	case "p", "backspace":
		if t.tree.Parent != nil {
			return t.open(t.tree.Parent.ID)
		}
	case "left", "h", "[":
		if n := len(t.tree.Siblings); n > 1 {
			return t.open(t.tree.Siblings[(t.tree.Position+n-1)%n].ID)
		}
	case "right", "l", "]":
		if n := len(t.tree.Siblings); n > 1 {
			return t.open(t.tree.Siblings[(t.tree.Position+1)%n].ID)
		}
	case "pgup":
		t.back += max(t.height/2, 1)
	case "pgdown":
		t.back = max(t.back-max(t.height/2, 1), 0)
	case "end", "G":
		t.back = 0
	case "s":
		if t.tree.Session.ParentID == "" {
			t.compose.Note = "✗ this is the main session: type in the conversation to message it"
			return nil
		}
		t.compose.Begin()
	}
	return nil
}

// typed takes a key or a paste while a message is typed, and sends the
// message Enter ends.
func (t *Screen) typed(msg tea.Msg) tea.Cmd {
	text, done, cmd := t.compose.Update(msg)
	if !done || text == "" {
		return cmd
	}
	if t.send == nil {
		t.compose.Note = "✗ this conversation cannot message its subagents"
		return nil
	}
	send, gen, id, ctx := t.send, t.gen, t.id, t.ctx
	t.compose.Note = "sending…"
	return func() tea.Msg {
		reply, err := send(ctx, id, text)
		return treeSentMsg{gen: gen, reply: reply, err: err}
	}
}

func (t *Screen) View(width, height int) string {
	t.height = height
	top := t.header(width)
	bottom := t.footer(width)
	body := max(height-len(top)-len(bottom), 1)
	lines := t.transcript(width)
	end := max(len(lines)-t.back, 0)
	start := max(end-body, 0)
	shown := lines[start:end]
	var out []string
	out = append(out, top...)
	for i := len(shown); i < body; i++ {
		out = append(out, "")
	}
	out = append(out, shown...)
	out = append(out, bottom...)
	return strings.Join(out, "\n")
}

// header names the session and where it stands in its tree.
func (t *Screen) header(width int) []string {
	s := t.tree.Session
	title := "Session tree · " + render.Short(t.id)
	if s.ID != "" {
		what := "main session"
		if s.ParentID != "" {
			what = s.Agent
			if s.Description != "" {
				what += " · " + render.OneLine(s.Description)
			}
		}
		title = fmt.Sprintf("Session tree · %s · %s · %s turns · %s", what, s.Status, fmt.Sprint(s.NumTurns), render.Short(s.ID))
	}
	place := "no parent (a main session)"
	if p := t.tree.Parent; p != nil {
		place = "parent: " + nodeName(*p)
	}
	if n := len(t.tree.Siblings); n > 1 {
		place += fmt.Sprintf(" · sibling %d of %d", t.tree.Position+1, n)
	}
	lines := []string{
		render.Heading.Render(ansi.Truncate(title, width, "…")),
		render.Dim.Render(ansi.Truncate(place, width, "…")),
	}
	if t.err != "" {
		lines = append(lines, render.Err.Render(ansi.Truncate("✗ "+t.err, width, "…")))
	}
	return append(lines, render.Dim.Render(strings.Repeat("─", width)))
}

// footer lists the children and the keys, or the message being typed.
func (t *Screen) footer(width int) []string {
	lines := []string{render.Dim.Render(strings.Repeat("─", width))}
	kids := t.tree.Children
	if len(kids) == 0 {
		lines = append(lines, render.Dim.Render("no children"))
	} else {
		lines = append(lines, render.Dim.Render(fmt.Sprintf("children (%d):", len(kids))))
		// At most 6 lines of children, the selected one among them.
		from := max(0, min(t.sel-2, len(kids)-6))
		for i := from; i < len(kids) && i < from+6; i++ {
			line := "  "
			if i == t.sel {
				line = "› "
			}
			line += statusMark(kids[i].Status) + " " + nodeName(kids[i]) + " — " + string(kids[i].Status)
			line = ansi.Truncate(line, width, "…")
			if i == t.sel {
				line = render.User.Render(line)
			}
			lines = append(lines, line)
		}
	}
	lines = append(lines, t.compose.Lines(width)...)
	if t.compose.Typing() {
		return lines
	}
	keys := "↑/↓ child · enter open · p parent · ←/→ sibling · s send a message · PgUp/PgDn scroll · esc back"
	return append(lines, render.Dim.Render(ansi.Truncate(keys, width, "…")))
}

// nodeName is how a session is named on the tree screen.
func nodeName(n cadre.SessionNode) string {
	if n.ParentID == "" {
		return "main " + render.Short(n.ID)
	}
	name := n.Agent
	if n.Description != "" {
		name += " " + render.OneLine(n.Description)
	}
	return name + " " + render.Short(n.ID)
}

// statusMark is a session status at a glance.
func statusMark(s cadre.SessionStatus) string {
	switch s {
	case cadre.SessionRunning:
		return render.Tool.Render("●")
	case cadre.SessionCompleted, cadre.SessionIdle:
		return render.OK.Render("✓")
	}
	return render.Err.Render("✗")
}

// transcript renders the session's messages so far as lines.
func (t *Screen) transcript(width int) []string {
	var out []string
	for i := range t.items {
		it := &t.items[i]
		if it.width != width {
			it.text, it.width = renderTreeEvent(it.ev, width), width
		}
		if it.text != "" {
			out = append(out, strings.Split(it.text, "\n")...)
		}
	}
	if len(out) == 0 && t.err == "" {
		out = append(out, render.Dim.Render("(no messages yet)"))
	}
	return out
}

// renderTreeEvent renders one transcript message as the conversation
// screen shows the main agent's: the user's text, the answer as
// Markdown, tool calls on one line with their results folded.
func renderTreeEvent(ev cadre.Event, width int) string {
	if ev.Type == cadre.EventSystem && ev.Subtype == cadre.SubtypeCompactBoundary {
		return render.Dim.Render("(older turns were compacted into a summary)")
	}
	if ev.Message == nil {
		return ""
	}
	var parts []string
	for _, b := range ev.Message.Content {
		switch b.Type {
		case llm.BlockText:
			text := strings.TrimSpace(b.Text)
			if text == "" {
				continue
			}
			if ev.Type == cadre.EventUser {
				parts = append(parts, render.User.Render(ansi.Wrap("› "+text, width, "")))
			} else {
				parts = append(parts, strings.TrimRight(render.Markdown(text, width), "\n"))
			}
		case llm.BlockToolUse:
			parts = append(parts, render.Tool.Render("⏺ ")+ansi.Truncate(render.Tool.Render(b.Name)+render.Dim.Render(render.Hint(b.Input)), width-2, "…"))
		case llm.BlockToolResult:
			parts = append(parts, render.Folded(b.ResultText(), b.IsError, width))
		}
	}
	return strings.Join(parts, "\n")
}

// StartMsg asks a pushed tree screen to start its watch: a Screen has
// no Init of its own, so Open sends this after pushing it.
type StartMsg struct{ s *Screen }

// Open pushes a tree screen at session id and starts it.
func Open(ctx context.Context, src Source, send Send, id string) tea.Cmd {
	s := New(ctx, src, send, id)
	return tea.Sequence(screen.Push(s), func() tea.Msg { return StartMsg{s} })
}
