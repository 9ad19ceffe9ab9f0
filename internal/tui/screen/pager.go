package screen

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/charmbracelet/x/ansi"
)

// Pager is a full-screen read-only text (a task's output, an agent's
// definition): a title, the text scrolled with the arrows and PgUp/PgDn,
// Esc or q to go back.
type Pager struct {
	title string
	lines []string
	top   int // first line shown
	// follow keeps the end in view until the user scrolls up: an output
	// is read from its end.
	follow bool
	height int
	// reload, if set, reads the text again ("r": a running task's output
	// grows); ctx bounds it.
	reload func(ctx context.Context) (string, error)
	ctx    context.Context
	err    string
}

// pagerTextMsg is a reloaded text.
type pagerTextMsg struct {
	p    *Pager
	text string
	err  error
}

// NewPager shows text under title.
func NewPager(title, text string) *Pager {
	p := &Pager{title: title, follow: true}
	p.set(text)
	return p
}

// Reloads lets "r" read the text again with read, bounded by ctx: a
// running task's output grows.
func (p *Pager) Reloads(ctx context.Context, read func(ctx context.Context) (string, error)) *Pager {
	p.reload, p.ctx = read, ctx
	return p
}

func (p *Pager) set(text string) {
	p.lines = strings.Split(strings.TrimRight(render.Clean(text), "\n"), "\n")
}

func (p *Pager) Update(msg tea.Msg) (Screen, tea.Cmd) {
	if t, ok := msg.(pagerTextMsg); ok && t.p == p {
		p.err = ""
		if t.err != nil {
			p.err = t.err.Error()
		} else {
			p.set(t.text)
		}
		return p, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	page := max(p.height-3, 1)
	switch k.String() {
	case "esc", "q":
		return p, Pop
	case "up", "k":
		p.scroll(-1)
	case "down", "j":
		p.scroll(1)
	case "pgup":
		p.scroll(-page)
	case "pgdown", "space":
		p.scroll(page)
	case "home", "g":
		p.top, p.follow = 0, false
	case "end", "G":
		p.follow = true
	case "r":
		if p.reload != nil {
			reload, ctx := p.reload, p.ctx
			return p, func() tea.Msg {
				text, err := reload(ctx)
				return pagerTextMsg{p: p, text: text, err: err}
			}
		}
	}
	return p, nil
}

func (p *Pager) scroll(n int) {
	if p.follow {
		p.top = max(len(p.lines)-max(p.height-3, 1), 0)
	}
	p.top = min(max(p.top+n, 0), max(len(p.lines)-1, 0))
	p.follow = false
}

func (p *Pager) View(width, height int) string {
	p.height = height
	body := max(height-3, 1)
	if p.follow {
		p.top = max(len(p.lines)-body, 0)
	}
	var b strings.Builder
	b.WriteString(render.Heading.Render(ansi.Truncate(p.title, width, "…")) + "\n")
	b.WriteString(render.Dim.Render(strings.Repeat("─", width)) + "\n")
	shown := 0
	for i := p.top; i < len(p.lines) && shown < body; i++ {
		b.WriteString(ansi.Truncate(p.lines[i], width, "…") + "\n")
		shown++
	}
	for ; shown < body; shown++ {
		b.WriteString("\n")
	}
	keys := "↑/↓ PgUp/PgDn scroll · g/G start/end · esc back"
	if p.reload != nil {
		keys = "↑/↓ PgUp/PgDn scroll · g/G start/end · r reload · esc back"
	}
	if p.err != "" {
		keys = "✗ " + p.err + " · " + keys
	}
	b.WriteString(render.Dim.Render(ansi.Truncate(keys, width, "…")))
	return b.String()
}
