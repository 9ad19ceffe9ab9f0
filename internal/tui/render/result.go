package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// MaxExpanded bounds the lines of one result shown unfolded (Ctrl+O).
const MaxExpanded = 20

// Folded is a result on one line: its first line and how many follow.
func Folded(result string, isError bool, width int) string {
	return fold(result, isError, width, false, "")
}

// Result is a result in the conversation's transcript: folded, saying
// Ctrl+O unfolds it, or unfolded to its first MaxExpanded lines.
func Result(result string, isError bool, width int, expanded bool) string {
	return fold(result, isError, width, expanded, ", ctrl+o shows")
}

// fold is a result on one line, or its first MaxExpanded lines; more
// follows the count of lines folded.
func fold(result string, isError bool, width int, expanded bool, more string) string {
	result = strings.TrimSpace(Clean(result))
	lines := strings.Split(result, "\n")
	style := Dim
	if isError {
		style = Err
	}
	if expanded && len(lines) > 1 {
		n := min(len(lines), MaxExpanded)
		out := make([]string, 0, n+1)
		for i, l := range lines[:n] {
			lead := "    "
			if i == 0 {
				lead = "  ⎿ "
			}
			out = append(out, style.Render(ansi.Truncate(lead+strings.TrimRight(l, " \t\r"), width, "…")))
		}
		if len(lines) > n {
			out = append(out, style.Render(fmt.Sprintf("    … %d more lines", len(lines)-n)))
		}
		return strings.Join(out, "\n")
	}
	first := strings.TrimSpace(lines[0])
	if first == "" {
		first = "(no output)"
	}
	if len(lines) > 1 {
		more = fmt.Sprintf(" (+%d lines%s)", len(lines)-1, more)
	} else {
		more = ""
	}
	return style.Render(ansi.Truncate("  ⎿ "+first, width-ansi.StringWidth(more), "…") + more)
}

// hintKeys are the input fields worth showing after a tool's name, best
// first.
var hintKeys = []string{"file_path", "notebook_path", "command", "pattern", "url", "query", "path", "description", "prompt"}

// Hint is a call's input in short: its most telling field.
func Hint(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range hintKeys {
		if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
			return "(" + OneLine(s) + ")"
		}
	}
	return ""
}

// Fields are an input object's fields as name and text, in the order
// Hint ranks them, then by name.
func Fields(input json.RawMessage) [][2]string {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	rank := func(k string) int {
		if i := slices.Index(hintKeys, k); i >= 0 {
			return i
		}
		return len(hintKeys)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([][2]string, 0, len(names))
	for _, k := range names {
		var s string
		if json.Unmarshal(in[k], &s) != nil {
			s = string(in[k])
		}
		out = append(out, [2]string{k, s})
	}
	return out
}
