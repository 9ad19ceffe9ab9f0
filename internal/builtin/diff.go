package builtin

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Hunk is one hunk of a structuredPatch, as Claude Code's Edit and Write
// results carry it (jsdiff's structuredPatch): 1-based starts — a side
// with no lines starts at the line after the point of change — and lines
// prefixed with " ", "-" or "+" without their newline, followed by
// "\ No newline at end of file" where a side's last line has none.
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

const (
	// diffContext is how many unchanged lines surround a change in a
	// hunk, as in Claude Code.
	diffContext = 3
	// diffMaxBytes bounds the text a diff is computed over, once the
	// lines both versions share at the start and the end are set aside;
	// past it a change has no patch (Claude Code's, too, is empty when
	// the content is too large).
	diffMaxBytes = 1 << 20
	// originalFileMax is the largest original a result carries whole
	// (originalFile); a larger one is null, as in Claude Code.
	originalFileMax = 256 << 10
	// changeTextMax is the most file text, before and after together, an
	// approval carries beside its diff (ACP sends it to the editor).
	changeTextMax = 1 << 20
)

// structuredPatch returns the hunks that turn old into new: none when
// they are equal, and ok false when the changed text is too large to
// diff.
func structuredPatch(old, new string) (hunks []Hunk, ok bool) {
	if old == new {
		return []Hunk{}, true
	}
	// Only the middle differs: the diff library's cost grows with the
	// text it is given (and faster than linearly), so give it the middle,
	// with the context lines around it, and shift its line numbers.
	oldLines, newLines := splitKeep(old), splitKeep(new)
	head := 0
	for head < len(oldLines) && head < len(newLines) && oldLines[head] == newLines[head] {
		head++
	}
	tail := 0
	for tail < len(oldLines)-head && tail < len(newLines)-head && oldLines[len(oldLines)-1-tail] == newLines[len(newLines)-1-tail] {
		tail++
	}
	skip := max(head-diffContext, 0)
	keepTail := max(tail-diffContext, 0)
	oldMid := strings.Join(oldLines[skip:len(oldLines)-keepTail], "")
	newMid := strings.Join(newLines[skip:len(newLines)-keepTail], "")
	if len(oldMid)+len(newMid) > diffMaxBytes {
		return nil, false
	}
	u, err := udiff.ToUnifiedDiff("", "", oldMid, udiff.Lines(oldMid, newMid), diffContext)
	if err != nil {
		return nil, false // the library's own edits are consistent: cannot happen
	}
	hunks = make([]Hunk, 0, len(u.Hunks))
	for _, h := range u.Hunks {
		out := Hunk{OldStart: h.FromLine + skip, NewStart: h.ToLine + skip}
		for _, l := range h.Lines {
			prefix := " "
			switch l.Kind {
			case udiff.Delete:
				prefix = "-"
				out.OldLines++
			case udiff.Insert:
				prefix = "+"
				out.NewLines++
			default:
				out.OldLines++
				out.NewLines++
			}
			text, nl := strings.CutSuffix(l.Content, "\n")
			out.Lines = append(out.Lines, prefix+text)
			if !nl {
				out.Lines = append(out.Lines, `\ No newline at end of file`)
			}
		}
		hunks = append(hunks, out)
	}
	return hunks, true
}

// splitKeep splits s into lines that keep their "\n"; the last may have
// none.
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unifiedDiff renders hunks as a unified diff of the file at path; from
// is "/dev/null" for a file that does not exist yet.
func unifiedDiff(path string, created bool, hunks []Hunk) string {
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	from := path
	if created {
		from = "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, path)
	for _, h := range hunks {
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines))
		for _, l := range h.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hunkRange is a hunk header's range as diff -u writes it: an empty side
// names the line before the change.
func hunkRange(start, lines int) string {
	switch lines {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, lines)
}
