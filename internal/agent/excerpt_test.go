package agent

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// TestMessagesQuoteOnlyAnExcerpt puts a long value in every place a
// message names what a file said: a problem or warning says which value
// was wrong with its first bytes, never the whole of it (FuzzAgentFile
// found the number case; the rest are its siblings).
func TestMessagesQuoteOnlyAnExcerpt(t *testing.T) {
	long := strings.Repeat("x", 300)
	num := strings.Repeat("7", 300)
	const head = "---\nname: x\ndescription: d\n"
	md := []struct {
		name    string
		format  Format
		content string
	}{
		{"frontmatter a number", FormatClaude, "---\n" + num + "\n---\n"},
		{"frontmatter a string", FormatClaude, "---\n" + long + "\n---\n"},
		{"unknown field", FormatClaude, head + long + ": 1\n---\n"},
		{"unknown field twice", FormatClaude, head + long + ": 1\n" + long + ": 2\n---\n"},
		{"enum", FormatClaude, head + "memory: " + long + "\n---\n"},
		{"permission mode", FormatClaude, head + "permissionMode: " + long + "\n---\n"},
		{"bool", FormatClaude, head + "background: " + long + "\n---\n"},
		{"count out of range", FormatClaude, head + "maxTurns: " + num + "\n---\n"},
		{"number", FormatClaude, head + "temperature: " + long + "\n---\n"},
		{"url", FormatClaude, head + "url: " + long + "\n---\n"},
		{"name", FormatClaude, "---\nname: " + long + "\ndescription: d\n---\n"},
		{"workspace field", FormatHarness, "---\ndescription: d\nworkspace:\n  " + long + ": 1\n---\n"},
		{"header", FormatClaude, head + "url: http://h\nheaders:\n  " + long + ": [1]\n---\n"},
		{"tools map", FormatOpenCode, "---\ndescription: d\ntools:\n  " + long + ": 3\n---\n"},
		{"permission key", FormatOpenCode, "---\ndescription: d\npermission:\n  " + long + ": deny\n---\n"},
		{"permission pattern", FormatOpenCode, "---\ndescription: d\npermission:\n  bash:\n    \"*\": deny\n    " + long + ": allow\n---\n"},
		{"permission action", FormatOpenCode, "---\ndescription: d\npermission:\n  task:\n    " + long + ": maybe\n---\n"},
		{"prompt file", FormatOpenCode, "---\ndescription: d\nprompt: \"{file:./" + long + "}\"\n---\n"},
	}
	for _, tt := range md {
		t.Run(tt.name, func(t *testing.T) {
			entries, problems := parseAgentInput(tt.format, []byte(tt.content))
			checkExcerpts(t, tt.content, entries, problems)
		})
	}
	settings := []struct{ name, json string }{
		{"settings key", `{"` + long + `": {"description": "d", "colour": 1}}`},
		{"settings key twice", `{"` + long + `": {"description": "d"}, "` + long + `": {}}`},
		{"settings value", `{"r": {"description": "d", "isolation": "` + long + `"}}`},
	}
	for _, tt := range settings {
		t.Run(tt.name, func(t *testing.T) {
			entries, problems := parseAgentInput(FormatJSON, []byte(tt.json))
			checkExcerpts(t, tt.json, entries, problems)
		})
	}
}

func checkExcerpts(t *testing.T, input string, entries []Entry, problems []Problem) {
	t.Helper()
	var texts []string
	for _, p := range problems {
		texts = append(texts, p.Error())
	}
	for _, e := range entries {
		texts = append(texts, e.Definition.Warnings...)
	}
	if len(texts) == 0 {
		t.Fatal("no problem or warning at all")
	}
	for _, s := range texts {
		fuzzcheck.NoEcho(t, "message", input, s)
	}
}
