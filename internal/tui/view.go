package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/teamview"
	"github.com/charmbracelet/x/ansi"
)

// View draws the screen: the transcript viewport above the fixed bottom
// (queued messages, the input or an approval prompt, the status line).
func (m *Model) View() tea.View {
	var content string
	if n := len(m.screens); n > 0 {
		content = m.screens[n-1].View(m.width, m.height)
	} else {
		content = m.view.View() + "\n" + m.bottom()
	}
	v := tea.NewView(content)
	v.AltScreen = true
	// The wheel scrolls the transcript (text is selected with Shift held,
	// as in other full-screen programs).
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// Screen is the text of the screen as View draws it, without styles: what
// golden tests compare.
func (m *Model) Screen() string {
	return ansi.Strip(m.View().Content)
}

// Transcript is the conversation as drawn, with its styles, for the
// terminal's scrollback when the TUI quits ("" when nothing was said).
func (m *Model) Transcript() string {
	if !slices.ContainsFunc(m.items, func(it *item) bool { return it.kind != kindWelcome }) {
		return ""
	}
	return strings.TrimRight(m.transcript(), "\n")
}

// bottom is everything under the transcript.
func (m *Model) bottom() string {
	var parts []string
	parts = append(parts, render.Dim.Render(strings.Repeat("─", m.width)))
	parts = append(parts, m.panel...)
	for _, q := range m.queued {
		parts = append(parts, render.Queued.Render(ansi.Truncate("⏳ queued: "+render.OneLine(q), m.width, "…")))
	}
	if len(m.approvals) > 0 {
		parts = append(parts, m.approvalView())
	} else {
		parts = append(parts, m.input.View())
		if m.shortcuts {
			parts = append(parts, m.shortcutSheet()...)
		}
		if len(m.completion) > 0 {
			lead := "@ "
			if strings.HasPrefix(m.completion[0], "/") {
				lead = ""
			}
			parts = append(parts, render.Dim.Render(ansi.Truncate(lead+strings.Join(m.completion, "  ")+"   (Tab or Enter completes)", m.width, "…")))
		}
	}
	parts = append(parts, m.status())
	return strings.Join(parts, "\n")
}

// chromeHeight is how many lines bottom takes: the viewport gets the rest.
func (m *Model) chromeHeight() int {
	return lipgloss.Height(m.bottom()) + 0
}

// status is the status line: model, permission mode, the tree's tokens
// and cost, background runs, and what Ctrl+C or Esc would do.
func (m *Model) status() string {
	s := m.stats
	parts := []string{m.model, string(m.mode), fmt.Sprintf("%s tokens", render.Count(s.Usage.Total())), s.CostUSD.String()}
	if s.BackgroundTasks > 0 {
		parts = append(parts, fmt.Sprintf("%d background", s.BackgroundTasks))
	}
	if team := teamview.Status(m.team); team != "" {
		parts = append(parts, team)
	}
	if m.running() {
		state := render.Spinner(m.frame) + " working"
		if m.thinking {
			state = render.Spinner(m.frame) + " thinking"
		}
		if m.retry != nil {
			state = render.Spinner(m.frame) + " " + m.retryText()
		}
		if n := m.runs.Running(); n > 0 {
			state += fmt.Sprintf(" · %d subagent%s", n, render.Plural(n))
		}
		if m.busy {
			state += " (esc stops)"
		}
		parts = append(parts, state)
	}
	line := strings.Join(parts, " · ")
	if m.quitArmed {
		line = render.Warn.Render("Press Ctrl+C again to quit") + render.Dim.Render(" · "+line)
		return ansi.Truncate(line, m.width, "…")
	}
	return render.Dim.Render(ansi.Truncate(line, m.width, "…"))
}

// retryText is the retry waited for: why, and the countdown to it.
func (m *Model) retryText() string {
	r := m.retry
	left := r.Delay - m.cfg.Now().Sub(m.retryAt)
	secs := int((max(left, 0) + time.Second - 1) / time.Second)
	why := strings.ReplaceAll(r.Kind, "_", " ")
	if r.Status != 0 {
		why += fmt.Sprintf(" (HTTP %d)", r.Status)
	}
	return fmt.Sprintf("%s · retrying in %ds (%d/%d)", why, secs, r.Attempt+1, r.MaxRetries+1)
}

// maxPanelLines caps the background panel's run lines.
const maxPanelLines = 3

// backgroundPanel are the background runs still going whose lines are out
// of view, above the input: their Agent calls' lines scroll away with the
// conversation, they do not.
func (m *Model) backgroundPanel() []string {
	var lines []string
	n := 0
	top, bottom := m.view.YOffset(), m.view.YOffset()+m.view.Height()
	for _, r := range m.runs.Runs() {
		if !r.Background || r.Done() {
			continue
		}
		if row, ok := m.rows[r.ToolUseID]; ok && row >= top && row < bottom {
			continue
		}
		if n++; n <= maxPanelLines {
			lines = append(lines, m.runLine(r, 0))
		}
	}
	if n > maxPanelLines {
		lines = append(lines, render.Dim.Render(fmt.Sprintf("… %d more running in the background (/tasks lists them)", n-maxPanelLines)))
	}
	return lines
}

// shortcuts are the keys the sheet lists ("?" on an empty prompt).
var shortcuts = [][2]string{
	{"enter", "send"}, {"shift+enter, ctrl+j", "new line"},
	{"↑ / ↓", "message history"}, {"esc, ctrl+c", "interrupt the turn"},
	{"ctrl+c twice", "quit"}, {"shift+tab", "permission mode"},
	{"@name", "run an agent / attach a file"}, {"/", "commands"},
	{"!", "shell command"}, {"ctrl+b", "subagents to the background"},
	{"ctrl+o", "unfold tool results"}, {"ctrl+t", "session tree"},
	{"pgup / pgdn, wheel", "scroll"}, {"tab", "complete"},
	{"/team", "the team's roster and tasks"}, {"@teammate text", "message a teammate"},
}

// shortcutSheet lays the shortcuts out in as many columns as fit.
func (m *Model) shortcutSheet() []string {
	const keyW, cellW = 20, 50
	cols := max(1, m.width/cellW)
	var lines []string
	for i := 0; i < len(shortcuts); i += cols {
		var b strings.Builder
		for j := i; j < min(i+cols, len(shortcuts)); j++ {
			cell := fmt.Sprintf("%-*s %s", keyW, shortcuts[j][0], shortcuts[j][1])
			if j < i+cols-1 {
				cell = fmt.Sprintf("%-*s", cellW, cell)
			}
			b.WriteString(cell)
		}
		lines = append(lines, render.Dim.Render(ansi.Truncate("  "+b.String(), m.width, "…")))
	}
	return lines
}
