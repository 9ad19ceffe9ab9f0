package teamview

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/charmbracelet/x/ansi"
)

// Board is the team's task list as lines, grouped as cadre.Team.Board
// groups it: in progress, pending, blocked (with what each waits on),
// completed; each task with its number, subject and owner.
func Board(t cadre.Team, width int) []string {
	if len(t.Tasks) == 0 {
		return []string{render.Dim.Render(ansi.Truncate("No tasks yet: the lead and the teammates add them with TaskCreate.", width, "…"))}
	}
	b := t.Board()
	var out []string
	group := func(title, mark string, tasks []cadre.TeamTask) {
		if len(tasks) == 0 {
			return
		}
		out = append(out, render.Dim.Render(ansi.Truncate(fmt.Sprintf("%s (%d)", title, len(tasks)), width, "…")))
		for _, task := range tasks {
			line := fmt.Sprintf("  %s #%s %s", mark, render.OneLine(task.ID), render.OneLine(task.Subject))
			if task.Owner != "" {
				line += " — " + render.OneLine(task.Owner)
			}
			if len(task.Waiting) > 0 {
				line += " · waits on #" + render.OneLine(strings.Join(task.Waiting, ", #"))
			}
			out = append(out, ansi.Truncate(line, width, "…"))
		}
	}
	group("In progress", render.Tool.Render("●"), b.InProgress)
	group("Pending", "○", b.Pending)
	group("Blocked", render.Warn.Render("◌"), b.Blocked)
	group("Completed", render.OK.Render("✓"), b.Completed)
	return out
}

// Summary sums the team up: its teammates by state, its tasks.
func Summary(t cadre.Team) string {
	c := t.Counts()
	n := len(t.Members)
	s := fmt.Sprintf("%d teammate%s (%s) · %d task%s, %d done", n, render.Plural(n), states(c), c.Tasks, render.Plural(c.Tasks), c.Done)
	return s
}

// Status is the team on the status line: its teammates by state and the
// tasks done, "" while the session leads no team.
func Status(t cadre.Team) string {
	if len(t.Members) == 0 && len(t.Tasks) == 0 {
		return ""
	}
	c := t.Counts()
	s := "team: " + states(c)
	if c.Tasks > 0 {
		s += fmt.Sprintf(" · %d/%d tasks done", c.Done, c.Tasks)
	}
	return s
}

// states are the teammates by state, the states nobody is in left out.
func states(c cadre.TeamCounts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{c.Working, "working"}, {c.Idle, "idle"}, {c.Ended, "ended"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}
