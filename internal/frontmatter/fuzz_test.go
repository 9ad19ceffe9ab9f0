package frontmatter

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// FuzzSplit cuts markdown files (agent, command and skill files share
// this) at their frontmatter and reads the frontmatter leniently, as
// Claude Code does. Beyond not panicking: the cut loses nothing, a file
// is refused only for an unclosed block, each value QuoteValues quotes
// reads back as the text it was, and aliases are checked quickly.
func FuzzSplit(f *testing.F) {
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.Contains(s, ":") || strings.HasPrefix(s, "---") }) {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}

	f.Fuzz(func(t *testing.T, data []byte, flowAsText bool) {
		file, err := Split(data)
		if err != nil {
			if !errors.Is(err, ErrNotClosed) {
				t.Fatalf("Split: %v, want only ErrNotClosed", err)
			}
			return
		}
		text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
		if got := strings.Join(file.Lines, "\n"); got != text {
			t.Errorf("Lines join to %q, want the file %q", got, text)
		}
		if !file.Found {
			if file.BodyStart != 0 || file.Frontmatter != nil {
				t.Errorf("no frontmatter, yet BodyStart %d and frontmatter %q", file.BodyStart, file.Frontmatter)
			}
			return
		}
		if !isFence(file.Lines[0]) || !isFence(file.Lines[file.BodyStart-1]) || len(file.Frontmatter) != file.BodyStart-2 {
			t.Errorf("frontmatter %q does not sit between the fences of %q", file.Frontmatter, file.Lines)
		}
		for _, l := range file.Frontmatter {
			if isFence(l) {
				t.Errorf("frontmatter %q holds a fence", file.Frontmatter)
			}
		}

		src := strings.Join(file.Frontmatter, "\n")
		var fixed string
		var quoted []int
		fuzzcheck.Timed(t, len(data), func() { fixed, quoted = QuoteValues(src, flowAsText) })
		before, after := strings.Split(src, "\n"), strings.Split(fixed, "\n")
		if len(before) != len(after) {
			t.Fatalf("QuoteValues turned %d lines into %d", len(before), len(after))
		}
		for _, n := range quoted {
			// A quoted line, read alone, holds the original value as text.
			m := topLevelField().FindStringSubmatch(before[n-1])
			var got map[string]any
			if m == nil || yaml.Unmarshal([]byte(after[n-1]), &got) != nil {
				continue // a value YAML cannot hold even quoted: the parse fails and is reported
			}
			if want := strings.TrimRight(m[2], " \t"); got[m[1]] != want {
				t.Errorf("line %d %q quoted as %q reads %q, want %q", n, before[n-1], after[n-1], got[m[1]], want)
			}
		}

		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) == nil {
			fuzzcheck.Timed(t, len(data), func() { _ = CheckAliases(&doc) })
		}
	})
}
