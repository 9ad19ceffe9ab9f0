package teamview

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/charmbracelet/x/ansi"
)

// TeamMsg carries the team as last read (cadre.Conversation.Team): the
// model that reads it keeps it for its status line, and the team screen,
// when on top, redraws with it.
type TeamMsg struct {
	Team cadre.Team
	Err  error
}

// Config is what the screen acts through.
type Config struct {
	// Ctx bounds the messages it sends.
	Ctx context.Context
	// Open shows the transcript of the teammate whose session is id (the
	// session tree screen).
	Open func(id string) tea.Cmd
	// Send gives text to the teammate named name, with SendMessage's
	// meaning (cadre.Conversation.SendSubagent), and says what became of
	// it; nil when the conversation cannot message its agents.
	Send func(ctx context.Context, name, text string) (string, error)
}

// Screen is the team screen.
type Screen struct {
	cfg  Config
	team cadre.Team
	err  string // why the last read of the team failed
	sel  int    // the selected teammate

	compose screen.Compose // a message to the selected teammate
}

// sentMsg is a message's outcome.
type sentMsg struct {
	s     *Screen
	reply string
	err   error
}

// New returns the screen over team as last read.
func New(cfg Config, team cadre.Team) *Screen {
	return &Screen{cfg: cfg, team: team, compose: screen.NewCompose("what the teammate should read next (Enter sends, Esc cancels)")}
}

// Selected is the teammate selected, if any.
func (s *Screen) Selected() (cadre.Teammate, bool) {
	if s.sel < 0 || s.sel >= len(s.team.Members) {
		return cadre.Teammate{}, false
	}
	return s.team.Members[s.sel], true
}

func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case TeamMsg:
		if msg.Err != nil {
			s.err = msg.Err.Error()
			return s, nil
		}
		s.err, s.team = "", msg.Team
		s.sel = min(s.sel, max(len(s.team.Members)-1, 0))
	case sentMsg:
		if msg.s != s {
			return s, nil
		}
		if msg.err != nil {
			s.compose.Note = "✗ " + msg.err.Error()
		} else {
			s.compose.Note = render.OneLine(msg.reply)
		}
	case tea.PasteMsg:
		if s.compose.Typing() {
			return s, s.typed(msg)
		}
	case tea.KeyPressMsg:
		if s.compose.Typing() {
			return s, s.typed(msg)
		}
		return s, s.key(msg)
	}
	return s, nil
}

// key takes a key while browsing.
func (s *Screen) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "q":
		return screen.Pop
	case "up", "k":
		s.sel = max(s.sel-1, 0)
	case "down", "j":
		s.sel = min(s.sel+1, max(len(s.team.Members)-1, 0))
	case "enter", "t":
		m, ok := s.Selected()
		switch {
		case !ok:
		case m.ID == "":
			s.compose.Note = fmt.Sprintf("✗ %s is still starting: its transcript opens once it runs", m.Name)
		case s.cfg.Open != nil:
			return s.cfg.Open(m.ID)
		}
	case "s", "m":
		if _, ok := s.Selected(); !ok {
			return nil
		}
		s.compose.Begin()
	}
	return nil
}

// typed takes a key or a paste while a message is typed, and sends the
// message Enter ends.
func (s *Screen) typed(msg tea.Msg) tea.Cmd {
	text, done, cmd := s.compose.Update(msg)
	m, ok := s.Selected()
	if !done || text == "" || !ok {
		return cmd
	}
	if s.cfg.Send == nil {
		s.compose.Note = "✗ this conversation cannot message its teammates"
		return nil
	}
	send, ctx := s.cfg.Send, s.cfg.Ctx
	s.compose.Note = "sending to " + m.Name + "…"
	return func() tea.Msg {
		reply, err := send(ctx, m.Name, text)
		return sentMsg{s: s, reply: reply, err: err}
	}
}

func (s *Screen) View(width, height int) string {
	top := s.header(width)
	bottom := s.footer(width)
	room := max(height-len(top)-len(bottom), 1)
	roster := s.roster(width)
	// The roster comes first; the board takes what is left, at least
	// its heading and a line.
	if len(roster) > max(room-3, 1) {
		roster = roster[:max(room-3, 1)]
	}
	board := cut(Board(s.team, width), room-len(roster)-1, width)
	out := append([]string{}, top...)
	out = append(out, roster...)
	out = append(out, render.Dim.Render(strings.Repeat("─", width)))
	out = append(out, board...)
	for n := len(roster) + 1 + len(board); n < room; n++ {
		out = append(out, "")
	}
	out = append(out, bottom...)
	return strings.Join(out, "\n")
}

// header names the team and sums it up.
func (s *Screen) header(width int) []string {
	title := "Team"
	if s.team.Name != "" {
		title += " " + render.OneLine(s.team.Name)
	}
	lines := []string{render.Heading.Render(ansi.Truncate(title+" · "+Summary(s.team), width, "…"))}
	if s.err != "" {
		lines = append(lines, render.Err.Render(ansi.Truncate("✗ "+s.err, width, "…")))
	}
	return append(lines, render.Dim.Render(strings.Repeat("─", width)))
}

// roster is one line per teammate, the selected one marked.
func (s *Screen) roster(width int) []string {
	if len(s.team.Members) == 0 {
		// Say how a team comes about: teams are off by default.
		text := ansi.Wrap("No teammates yet. With teams on (CADRE_AGENT_TEAMS=1, or \"subagents\": {\"teams\": true} in settings) the main agent adds one with an Agent call that gives a name.", width, "")
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = render.Dim.Render(l)
		}
		return lines
	}
	rows := [][]string{{"  NAME", "#", "AGENT", "STATE", "TOKENS", "TASK"}}
	for _, m := range s.team.Members {
		num := "—"
		if m.Index > 0 {
			num = fmt.Sprintf("#%d", m.Index)
		}
		task := render.OneLine(m.Task)
		if task == "" {
			task = "—"
		}
		rows = append(rows, []string{"  " + stateMark(m.State) + " " + render.OneLine(m.Name), num, render.OneLine(m.Agent), m.State, render.Count(m.Tokens), task})
	}
	lines := strings.Split(render.Table(rows, width), "\n")
	lines[0] = render.Dim.Render(lines[0])
	if s.sel < len(s.team.Members) {
		row := s.sel + 1
		lines[row] = render.User.Render("›" + strings.TrimPrefix(lines[row], " "))
	}
	return lines
}

// footer is the outcome of the last message and the keys, or the message
// being typed.
func (s *Screen) footer(width int) []string {
	lines := []string{render.Dim.Render(strings.Repeat("─", width))}
	lines = append(lines, s.compose.Lines(width)...)
	if s.compose.Typing() {
		return lines
	}
	keys := "↑/↓ teammate · enter its transcript · s send it a message · esc back"
	return append(lines, render.Dim.Render(ansi.Truncate(keys, width, "…")))
}

// stateMark is a teammate's state at a glance.
func stateMark(state string) string {
	switch state {
	case "working":
		return render.Tool.Render("●")
	case "idle":
		return render.OK.Render("○")
	}
	return render.Err.Render("✗")
}

// cut keeps n lines of lines, saying how many more there are.
func cut(lines []string, n, width int) []string {
	if n < 1 {
		return nil
	}
	if len(lines) <= n {
		return lines
	}
	more := render.Dim.Render(ansi.Truncate(fmt.Sprintf("… %d more lines (a taller window shows them)", len(lines)-n+1), width, "…"))
	return append(lines[:n-1:n-1], more)
}
