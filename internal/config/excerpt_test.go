package config

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// TestMessagesQuoteOnlyAnExcerpt puts a long value in every place an
// error or warning about a settings file names what the file said: a key
// path, a number, a string that is not one of the allowed, a permission
// rule or mode. A message names it with its first bytes, never whole.
func TestMessagesQuoteOnlyAnExcerpt(t *testing.T) {
	long := strings.Repeat("x", 300)
	num := "1" + strings.Repeat("0", 300)
	for _, tc := range []struct{ name, content string }{
		{"whole number", `{"maxTurns": ` + num + `}`},
		{"number", `{"compaction": {"threshold": 1.` + strings.Repeat("5", 300) + `e999}}`},
		{"provider name", `{"providers": {"` + long + `": {}}}`},
		{"provider type", `{"providers": {"x": {"type": "` + long + `"}}}`},
		{"model price", `{"pricing": {"` + long + `": {"input": -1}}}`},
		{"surface", `{"subagents": {"surface": "` + long + `"}}`},
		{"cleanup", `{"subagents": {"cleanup": "` + long + `"}}`},
		{"announce", `{"subagents": {"announce": "` + long + `"}}`},
		{"subagent tool", `{"subagents": {"tools": {"allow": ["(` + long + `"]}}}`},
		{"rule specifier", `{"permissions": {"allow": ["Bash(` + long + `"]}}`},
		{"rule tool name", `{"permissions": {"deny": ["` + long + `(x"]}}`},
		{"mode", `{"permissions": {"defaultMode": "` + long + `"}}`},
		{"task pattern", `{"permissions": {"task": {"` + long + `": "x"}}}`},
		{"alias name", `{"aliases": {"` + long + `": 1}}`},
		{"unknown key", `{"` + long + `": 1}`},
		{"unknown nested key", `{"subagents": {"` + long + `": 1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(t, ScopeProject, tc.content)
			l, err := e.load(Overrides{})
			var texts []string
			if err != nil {
				texts = append(texts, err.Error())
			} else {
				for _, w := range l.Warnings {
					texts = append(texts, w.String())
				}
			}
			if len(texts) == 0 {
				t.Fatal("no error or warning")
			}
			for _, s := range texts {
				fuzzcheck.NoEcho(t, "message", tc.content, s)
			}
		})
	}
}
