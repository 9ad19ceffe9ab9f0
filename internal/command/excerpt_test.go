package command

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// TestMessagesQuoteOnlyAnExcerpt puts a long value in every place a
// problem or warning about a command file names what the file said
// (FuzzCommandFile found the shell pre-execution warning repeating the
// command whole; the rest are its siblings).
func TestMessagesQuoteOnlyAnExcerpt(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ name, file string }{
		{"inline shell", "Run !`" + long + "` now\n"},
		{"context", "---\ncontext: " + long + "\n---\nbody\n"},
		{"name", "---\nname: " + long + "\n---\nbody\n"},
		{"unknown field", "---\n" + long + ": 1\n---\nbody\n"},
		{"field given twice", "---\n" + long + ": 1\n" + long + ": 2\n---\nbody\n"},
		{"not a mapping", "---\n" + long + "\n---\nbody\n"},
		{"allowed-tools element", "---\nallowed-tools: [" + long + ": 1]\n---\nbody\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := parseFile("x.md", []byte(tc.file), KindCommand, "x", SourceProject)
			texts := c.Warnings
			for _, p := range problems {
				texts = append(texts, p.Error())
			}
			if len(texts) == 0 {
				t.Fatal("no problem or warning")
			}
			for _, s := range texts {
				fuzzcheck.NoEcho(t, "message", tc.file, s)
			}
		})
	}
}
