package render

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestRenderMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"heading and inline", "# Title\n\nSome **bold**, *it* and `code`.", 40, "Title\n\nSome bold, it and code."},
		{"snake_case stays", "call read_file_now", 40, "call read_file_now"},
		{"bullets", "- one\n* two\n  1. nested", 40, "• one\n• two\n  1. nested"},
		{"item continued", "- a long item\n  that goes on", 40, "• a long item that goes on"},
		{"item wrapped under its text", "- alpha beta gamma delta", 14, "• alpha beta\n  gamma delta"},
		{"code kept as is", "```go\nif x {\n\treturn\n}\n```", 40, "  if x {\n      return\n  }"},
		{"quote", "> careful", 40, "│ careful"},
		{"rule", "---", 10, "──────────"},
		{"unclosed markers", "a * b and `x", 40, "a * b and `x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ansi.Strip(Markdown(tc.in, tc.width))
			lines := strings.Split(got, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight(l, " ")
			}
			if got := strings.Join(lines, "\n"); got != tc.want {
				t.Errorf("Markdown(%q, %d) =\n%s\nwant\n%s", tc.in, tc.width, got, tc.want)
			}
		})
	}
}

// Whoever renders Markdown (the transcript, the session tree) gets it
// without escape sequences.
func TestRenderMarkdownCleans(t *testing.T) {
	if got := Markdown("a\x1b[2Jb\x1b]0;t\x07c", 40); strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x1b]0;") || !strings.Contains(ansi.Strip(got), "abc") {
		t.Errorf("renderMarkdown kept escape sequences: %q", got)
	}
}
