package render

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// Clean makes text from outside — the model, tools, files, agent
// definitions — safe to draw: escape sequences are removed (they would
// drive the terminal, not show: clear it, retitle it, move the cursor
// over the input), other control characters but newlines become spaces,
// and tabs four spaces.
func Clean(s string) string {
	s = ansi.Strip(s)
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return ' '
	}, s)
	return strings.ReplaceAll(s, "\t", "    ")
}

// OneLine is s on one line, cleaned.
func OneLine(s string) string {
	return strings.Join(strings.Fields(Clean(s)), " ")
}

// Elapsed is a duration as people read it: 4s, 1m05s.
func Elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// Count is a token count in short: 950, 12.3k, 1.2M.
func Count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// Short is an id's last 8 characters: enough to tell runs apart on
// screen (ids made in the same millisecond share their first ones).
func Short(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Table lays rows out in columns (the first row is the header), each line
// cut to width: compact output for the transcript.
func Table(rows [][]string, width int) string {
	if len(rows) == 0 {
		return ""
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if i < len(r)-1 {
				widths[i] = max(widths[i], ansi.StringWidth(c))
			}
		}
	}
	var b strings.Builder
	for n, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if i < len(r)-1 {
				line.WriteString(c + strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
			} else {
				line.WriteString(c)
			}
		}
		if n > 0 {
			b.WriteString("\n")
		}
		b.WriteString(ansi.Truncate(strings.TrimRight(line.String(), " "), width, "…"))
	}
	return b.String()
}
