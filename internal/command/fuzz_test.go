package command

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// FuzzCommandFile feeds slash-command and skill files, which a cloned
// repository chooses, to the parser, and expands the result with fuzzed
// arguments. Beyond not panicking: parsing is quick, every problem and
// warning names the file and a line inside it without repeating more
// than an excerpt of it, an accepted command is well formed, and
// expansion never expands the arguments' own text again.
func FuzzCommandFile(f *testing.F) {
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.HasPrefix(s, "---") || strings.Contains(s, "$") }) {
		f.Add(false, []byte(s), "src/ --deep")
		f.Add(true, []byte(s), `"a b" c`)
	}

	const path = "/fuzz/.claude/commands/fuzzed.md"
	f.Fuzz(func(t *testing.T, skill bool, data []byte, args string) {
		kind := KindCommand
		if skill {
			kind = KindSkill
		}
		var c Command
		var problems []Problem
		fuzzcheck.Timed(t, len(data), func() { c, problems = parseFile(path, data, kind, "fuzzed", SourceProject) })

		input, lines := string(data), fuzzcheck.Lines(data)
		for _, p := range problems {
			text := p.Error()
			if p.Path != path || p.Line < 1 || p.Line > lines {
				t.Errorf("problem %q does not name a line of the %d of %s", text, lines, path)
			}
			fuzzcheck.NoEcho(t, "problem", input, text)
		}
		for _, w := range c.Warnings {
			if !strings.HasPrefix(w, path+":") {
				t.Errorf("warning %q does not name the file %s", w, path)
			}
			fuzzcheck.NoEcho(t, "warning", input, w)
		}
		if len(problems) > 0 {
			return
		}
		if c.Context != "" && c.Context != "fork" {
			t.Errorf("accepted context %q", c.Context)
		}
		if kind == KindSkill && c.Description == "" {
			t.Error("accepted a skill without a description")
		}
		if c.Line < 1 || c.Line > lines {
			t.Errorf("body starts on line %d of %d", c.Line, lines)
		}

		out := c.Expand(args)
		if !strings.Contains(c.Body, "$") {
			want := c.Body
			switch {
			case strings.TrimSpace(args) == "":
			case want == "":
				want = "ARGUMENTS: " + args
			default:
				want += "\n\nARGUMENTS: " + args
			}
			if out != want {
				t.Errorf("a body without placeholders expands to %q, want %q", out, want)
			}
		}
		// Each placeholder is filled once, with the arguments (each byte
		// of invalid UTF-8 in them read as the 3-byte U+FFFD) or the
		// skill's folder.
		fill := 3*len(args) + len(filepath.Dir(path))
		if limit := len(c.Body) + (strings.Count(c.Body, "$")+1)*fill + len("\n\nARGUMENTS: "); len(out) > limit {
			t.Errorf("expansion is %d bytes, more than %d: the arguments were expanded again", len(out), limit)
		}
	})
}
