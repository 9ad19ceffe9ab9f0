package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/cadre-dev/cadre/internal/tui/sessiontree"
	"github.com/charmbracelet/x/ansi"
)

// /model, /compact, /clear and /resume: the conversation itself.

func (m *Model) modelCommand(args string) tea.Cmd {
	if args == "" {
		m.Info(fmt.Sprintf("The main agent's model is %s. /model NAME changes it (an alias such as sonnet or opus, or provider:model); /model default goes back.", m.model))
		return nil
	}
	st, ok := m.steering("/model")
	if !ok {
		return nil
	}
	if err := st.SetModel(args); err != nil {
		m.Error(err.Error())
		return nil
	}
	// The status line names the model as the runtime resolved it (an
	// alias becomes its full name; "default" the opening model's).
	m.model = st.Model()
	if args == "default" {
		m.Info(fmt.Sprintf("The main agent goes back to %s, the model it opened with, from its next call.", m.model))
		return nil
	}
	m.Info(fmt.Sprintf("The main agent uses %s from its next call.", m.model))
	return nil
}

// compactCommand queues a compaction: it is a turn of its own, shown as
// the other queued input is.
func (m *Model) compactCommand(string) tea.Cmd {
	st, ok := m.steering("/compact")
	if !ok {
		return nil
	}
	if err := st.Compact(m.ctx); err != nil {
		m.Error(err.Error())
		return nil
	}
	if m.busy {
		m.queued = append(m.queued, "/compact")
		m.refresh()
		return nil
	}
	m.busy = true
	m.add(&item{kind: kindUser, text: "/compact"})
	return nil
}

// clearCommand starts a fresh session in the same TUI: the program ends
// with the request to open one (Config.Reopen), and the caller opens it.
func (m *Model) clearCommand(string) tea.Cmd {
	if m.cfg.Reopen == nil {
		m.Error("/clear is not available here: this TUI cannot open another session")
		return nil
	}
	m.cfg.Reopen(cadre.OpenRequest{})
	return tea.Quit
}

// resumeCommand lists the sessions of the working directory, as a tree,
// to pick one.
func (m *Model) resumeCommand(string) tea.Cmd {
	rt, ok := m.runtime("/resume")
	if !ok {
		return nil
	}
	ctx := m.ctx
	current := ""
	if st, ok := m.conv.(Steering); ok {
		current = st.SessionID()
	}
	return func() tea.Msg {
		all, err := rt.Sessions(ctx, rt.Cwd(), 100)
		if err != nil {
			return commandMsg{err: err}
		}
		// The session open now is not one to resume; its subagents'
		// sessions are in the tree (Ctrl+T).
		var sessions []cadre.Session
		for _, s := range all {
			if s.ID != current && s.ParentID != current {
				sessions = append(sessions, s)
			}
		}
		if len(sessions) == 0 {
			return commandMsg{info: "No earlier sessions in this directory."}
		}
		return commandMsg{then: screen.Push(newResumeScreen(m, rt, cadre.SessionRows(sessions)))}
	}
}

// resumeScreen is /resume: the sessions as `cadre sessions` shows them;
// Enter on a main session reopens it, on a subagent's opens its tree.
type resumeScreen struct {
	m    *Model
	rt   Runtime
	rows []cadre.SessionRow
	at   int
	top  int
	err  string
}

func newResumeScreen(m *Model, rt Runtime, rows []cadre.SessionRow) *resumeScreen {
	return &resumeScreen{m: m, rt: rt, rows: rows}
}

func (s *resumeScreen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return s, nil
	}
	switch k.String() {
	case "esc", "q":
		return s, screen.Pop
	case "up", "k":
		s.at = max(s.at-1, 0)
	case "down", "j":
		s.at = min(s.at+1, len(s.rows)-1)
	case "enter":
		row := s.rows[s.at]
		if row.ParentID != "" {
			return s, s.m.pushTree(s.rt, row.ID)
		}
		if s.m.cfg.Reopen == nil {
			s.err = "this TUI cannot open another session"
			return s, nil
		}
		if st, ok := s.m.conv.(Steering); ok && st.SessionID() == row.ID {
			s.err = "that is the session open now"
			return s, nil
		}
		s.m.cfg.Reopen(cadre.OpenRequest{Resume: row.ID})
		return s, tea.Quit
	}
	return s, nil
}

func (s *resumeScreen) View(width, height int) string {
	var b strings.Builder
	b.WriteString(render.Heading.Render("Resume a session") + render.Dim.Render(" · newest first, subagents under their parent") + "\n")
	b.WriteString(render.Dim.Render(strings.Repeat("─", width)) + "\n")
	body := max(height-4, 1)
	if s.at < s.top {
		s.top = s.at
	}
	if s.at >= s.top+body {
		s.top = s.at - body + 1
	}
	lines := 2
	for i := s.top; i < len(s.rows) && i < s.top+body; i++ {
		r := s.rows[i]
		indent := strings.Repeat("  ", r.Depth)
		if r.Depth > 0 {
			indent = strings.Repeat("  ", r.Depth-1) + "└ "
		}
		title := r.Title
		if r.ParentID != "" {
			title = r.Agent
		}
		line := fmt.Sprintf("%s%s  %s  %s  %d turns  %s", indent, render.Short(r.ID), r.Updated.Local().Format(time.DateTime), r.Status, r.NumTurns, render.OneLine(title))
		line = ansi.Truncate(line, width-2, "…")
		if i == s.at {
			line = render.User.Render("› " + line)
		} else {
			line = "  " + line
		}
		b.WriteString(line + "\n")
		lines++
	}
	if s.err != "" {
		b.WriteString(render.Err.Render(ansi.Truncate("✗ "+s.err, width, "…")) + "\n")
		lines++
	}
	for ; lines < height-1; lines++ {
		b.WriteString("\n")
	}
	b.WriteString(render.Dim.Render(ansi.Truncate("↑/↓ select · enter reopens a session (a subagent's opens its tree) · esc back", width, "…")))
	return b.String()
}

// treeCommand opens the session tree: at the main session, or at the
// subagent named (#N, an id…).
func (m *Model) treeCommand(args string) tea.Cmd {
	rt, ok := m.runtime("/tree")
	if !ok {
		return nil
	}
	st, ok := m.steering("/tree")
	if !ok {
		return nil
	}
	if args == "" {
		return m.pushTree(rt, st.SessionID())
	}
	ctx := m.ctx
	return func() tea.Msg {
		run, err := st.FindSubagent(ctx, args)
		if err != nil {
			return commandMsg{err: err}
		}
		return commandMsg{then: m.pushTree(rt, run.ID)}
	}
}

// openTree is Ctrl+T: the tree at the newest running subagent, else at
// the main session.
func (m *Model) openTree() tea.Cmd {
	rt, ok := m.runtime("the session tree")
	if !ok {
		return nil
	}
	st, ok := m.steering("the session tree")
	if !ok {
		return nil
	}
	at := st.SessionID()
	if runs, err := st.Subagents(m.ctx); err == nil {
		for _, r := range runs {
			if r.Running() {
				at = r.ID
			}
		}
	}
	return m.pushTree(rt, at)
}

// pushTree opens the session tree at session id.
func (m *Model) pushTree(rt Runtime, id string) tea.Cmd {
	var send sessiontree.Send
	if st, ok := m.conv.(Steering); ok {
		send = st.SendSubagent
	}
	return sessiontree.Open(m.ctx, rt, send, id)
}
