package render

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// A small Markdown renderer for the assistant's answers: headings, fenced
// code, lists, quotes, rules, and **bold**, *italic* and `code` inline. A
// full renderer would cost every launch: charm.land/glamour/v2 v2.0.1
// resolves with the pinned Bubble Tea, but its syntax highlighter's
// package init (chroma's lexers and styles, regexps compiled at init)
// measured 14–36 ms of the 100 ms start-up budget here (GODEBUG=inittrace,
// on this shared machine), against none for these few rules, which cover
// what models write.

var (
	styleCode   = lipgloss.NewStyle().Foreground(lipgloss.BrightYellow)
	styleBold   = lipgloss.NewStyle().Bold(true)
	styleItalic = lipgloss.NewStyle().Italic(true)
	styleQuote  = lipgloss.NewStyle().Faint(true).Italic(true)
)

// Markdown renders text for a width of w cells.
func Markdown(text string, w int) string {
	text = Clean(text) // whoever wrote it, it is not the terminal's to obey
	var out []string
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	inCode := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			out = append(out, styleCode.Render("  "+ansi.Truncate(line, w-2, "…")))
			continue
		}
		switch {
		case trim == "":
			out = append(out, "")
		case strings.HasPrefix(trim, "#"):
			h := strings.TrimSpace(strings.TrimLeft(trim, "#"))
			out = append(out, Heading.Render(ansi.Wrap(inline(h), w, "")))
		case trim == "---" || trim == "***" || trim == "___":
			out = append(out, Dim.Render(strings.Repeat("─", min(w, 40))))
		case strings.HasPrefix(trim, "> "):
			out = append(out, indent(styleQuote.Render(ansi.Wrap(inline(trim[2:]), w-2, "")), "│ "))
		default:
			if bullet, rest, ok := listItem(line); ok {
				// Indented lines that follow, not items themselves,
				// continue the item: wrapped with it.
				for i+1 < len(lines) && continues(lines[i+1]) {
					i++
					rest += " " + strings.TrimSpace(lines[i])
				}
				pad := strings.Repeat(" ", ansi.StringWidth(bullet))
				body := ansi.Wrap(inline(rest), w-len(pad), "")
				out = append(out, bullet+indent(body, pad)[len(pad):])
				continue
			}
			out = append(out, ansi.Wrap(inline(trim), w, ""))
		}
	}
	return strings.Join(out, "\n")
}

// continues reports whether line continues the list item above it:
// indented text that is not an item, a fence or a quote.
func continues(line string) bool {
	trim := strings.TrimLeft(line, " \t")
	if trim == "" || len(trim) == len(line) || strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, ">") {
		return false
	}
	_, _, item := listItem(line)
	return !item
}

// listItem splits a list line into its bullet (with its indentation, as
// shown) and its text.
func listItem(line string) (bullet, rest string, ok bool) {
	trim := strings.TrimLeft(line, " \t")
	lead := strings.Repeat(" ", min(len(line)-len(trim), 8))
	if len(trim) > 2 && (trim[0] == '-' || trim[0] == '*' || trim[0] == '+') && trim[1] == ' ' {
		return lead + "• ", trim[2:], true
	}
	i := 0
	for i < len(trim) && i < 4 && trim[i] >= '0' && trim[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(trim) && (trim[i] == '.' || trim[i] == ')') && trim[i+1] == ' ' {
		return lead + trim[:i+1] + " ", trim[i+2:], true
	}
	return "", "", false
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// inline renders **bold**, *italic* and `code` spans (not _italic_:
// snake_case names are far more common in answers about code).
func inline(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end >= 0 {
				b.WriteString(styleCode.Render(s[1 : 1+end]))
				s = s[end+2:]
				continue
			}
		case strings.HasPrefix(s, "**"):
			if end := strings.Index(s[2:], "**"); end > 0 {
				b.WriteString(styleBold.Render(s[2 : 2+end]))
				s = s[end+4:]
				continue
			}
		case s[0] == '*' && len(s) > 2 && s[1] != ' ':
			if end := strings.IndexByte(s[1:], '*'); end > 0 && s[end] != ' ' {
				b.WriteString(styleItalic.Render(s[1 : 1+end]))
				s = s[end+2:]
				continue
			}
		}
		n := strings.IndexAny(s[1:], "`*")
		if n < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:n+1])
		s = s[n+1:]
	}
	return b.String()
}
