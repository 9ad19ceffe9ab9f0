package render

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/charmbracelet/x/ansi"
)

// Diff shows an edit's change: the file, then its unified diff (without
// the file headers), lines coloured by kind and cut to width, at most n
// diff lines. The file's text is from outside: cleaned of escape
// sequences before it is drawn.
func Diff(c *cadre.FileChange, width, n int) []string {
	head := OneLine(c.Path)
	if c.Create {
		head += " (new file)"
	}
	out := []string{ansi.Truncate(Tool.Render(head), width, "…")}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
		if !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		if i == n {
			out = append(out, Dim.Render(fmt.Sprintf("… %d more lines of the diff", len(lines)-n)))
			break
		}
		text := ansi.Truncate(strings.TrimRight(Clean(l), "\r "), width, "…")
		switch {
		case strings.HasPrefix(l, "@@"):
			text = Dim.Render(text)
		case strings.HasPrefix(l, "+"):
			text = OK.Render(text)
		case strings.HasPrefix(l, "-"):
			text = Err.Render(text)
		}
		out = append(out, text)
	}
	return out
}
