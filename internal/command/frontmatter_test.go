package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitMarkdownErrorLines(t *testing.T) {
	// File lines: "---" is line 1, so the frontmatter starts on line 2.
	for _, tc := range []struct {
		name, file string
		wantLine   int
	}{
		{"unclosed flow list", "---\ndescription: d\nallowed-tools: [Read, Grep\nmodel: m\n---\n", 3},
		{"list item out of line", "---\ndescription: d\nallowed-tools:\n  - Read\n - Grep\n---\n", 5},
		{"tab indentation", "---\ndescription: d\nmodel: m\n\tagent: a\n---\n", 4},
		{"text after a quoted value", "---\ndescription: d\nmodel: 'm' x\n---\n", 3},
		{"unclosed quote", "---\ndescription: d\nmodel: \"m\nagent: a\n---\n", 3},
		{"error after a valid multi-line value", "---\nallowed-tools: [Read,\n  Grep,\n  Glob]\ndescription: d\nmodel: 'm' x\n---\n", 6},
		{"not a mapping", "---\n- a\n---\n", 2},
		{"unclosed frontmatter", "---\ndescription: d\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, prob := splitMarkdown([]byte(tc.file))
			if prob == nil {
				t.Fatal("no problem reported")
			}
			if prob.Line != tc.wantLine {
				t.Errorf("line %d (%s); want %d", prob.Line, prob.Message, tc.wantLine)
			}
		})
	}
}

func TestSplitMarkdownBody(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		body       string
		line       int
	}{
		{"no frontmatter", "\n\nHello\nworld\n", "Hello\nworld", 3},
		{"frontmatter", "---\ndescription: d\n---\n\nBody\n", "Body", 5},
		{"empty body", "---\ndescription: d\n---\n", "", 4},
		{"crlf and bom", "\ufeff---\r\ndescription: d\r\n---\r\nBody\r\n", "Body", 4},
		{"empty file", "", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md, prob := splitMarkdown([]byte(tc.file))
			if prob != nil {
				t.Fatal(prob)
			}
			if diff := cmp.Diff([2]any{tc.body, tc.line}, [2]any{md.body, md.bodyLine}); diff != "" {
				t.Errorf("body, line (-want +got):\n%s", diff)
			}
		})
	}
}
