package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
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
	if len(m.items) == 0 {
		return ""
	}
	return strings.TrimRight(m.transcript(), "\n")
}

// bottom is everything under the transcript.
func (m *Model) bottom() string {
	var parts []string
	parts = append(parts, styleDim.Render(strings.Repeat("─", m.width)))
	parts = append(parts, m.panel...)
	for _, q := range m.queued {
		parts = append(parts, styleQueued.Render(ansi.Truncate("⏳ queued: "+oneLine(q), m.width, "…")))
	}
	if len(m.approvals) > 0 {
		parts = append(parts, m.approvalView())
	} else {
		parts = append(parts, m.input.View())
		if len(m.completion) > 0 {
			lead := "@ "
			if strings.HasPrefix(m.completion[0], "/") {
				lead = ""
			}
			parts = append(parts, styleDim.Render(ansi.Truncate(lead+strings.Join(m.completion, "  ")+"   (Tab or Enter completes)", m.width, "…")))
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
	parts := []string{m.model, string(m.mode), fmt.Sprintf("%s tokens", count(s.Usage.Total())), s.CostUSD.String()}
	if s.BackgroundTasks > 0 {
		parts = append(parts, fmt.Sprintf("%d background", s.BackgroundTasks))
	}
	if m.running() {
		state := spinner[m.frame%len(spinner)] + " working"
		if m.thinking {
			state = spinner[m.frame%len(spinner)] + " thinking"
		}
		if n := m.runs.Running(); n > 0 {
			state += fmt.Sprintf(" · %d subagent%s", n, plural(n))
		}
		if m.busy {
			state += " (esc stops)"
		}
		parts = append(parts, state)
	}
	line := strings.Join(parts, " · ")
	if m.quitArmed {
		line = styleWarn.Render("Press Ctrl+C again to quit") + styleDim.Render(" · "+line)
		return ansi.Truncate(line, m.width, "…")
	}
	return styleDim.Render(ansi.Truncate(line, m.width, "…"))
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
		lines = append(lines, styleDim.Render(fmt.Sprintf("… %d more running in the background (/tasks lists them)", n-maxPanelLines)))
	}
	return lines
}
