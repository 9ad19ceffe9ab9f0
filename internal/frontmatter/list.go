package frontmatter

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sep says what separates the entries of a list written as one string.
type Sep int

const (
	// Commas separate entries: "Read, Grep, Bash(git diff:*)". Agent files
	// write tool, skill and server lists so.
	Commas Sep = iota
	// CommasOrSpace lets white space separate entries too: "Read Grep
	// Bash(git diff *)", as commands' and skills' allowed-tools may.
	CommasOrSpace
)

// ListProblem is a value List could not read: Node is where it sits (for
// the line), Key the field, or the field and index of a bad entry
// ("tools[2]"), and Msg what was wrong.
type ListProblem struct {
	Node *yaml.Node
	Key  string
	Msg  string
}

// List reads the list field key: a YAML list of strings, or one string of
// entries split by SplitList. Entries are trimmed and empty ones dropped.
// Nothing (null) reads as nil, "not set"; an empty string or list as an
// empty, non-nil list, "none". Entries that are not strings are left out
// and reported, as is a value that is neither a string nor a list.
func List(n *yaml.Node, key string, sep Sep) ([]string, []ListProblem) {
	const want = "want a list of strings or a comma-separated string"
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return nil, nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		return SplitList(n.Value, sep), nil
	case n.Kind == yaml.SequenceNode:
		out := []string{}
		var bad []ListProblem
		for i, e := range n.Content {
			e = Deref(e)
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
				bad = append(bad, ListProblem{e, fmt.Sprintf("%s[%d]", key, i), fmt.Sprintf("%s, got %s", want, Describe(e))})
				continue
			}
			if s := strings.TrimSpace(e.Value); s != "" {
				out = append(out, s)
			}
		}
		return out, bad
	}
	return nil, []ListProblem{{n, key, fmt.Sprintf("%s, got %s", want, Describe(n))}}
}

// SplitList splits a list written as one string at sep, but never inside
// parentheses, so that "Bash(git diff, git log), Read" is two entries.
// Entries are trimmed and empty ones dropped; the result is never nil.
func SplitList(s string, sep Sep) []string {
	out := []string{}
	depth, start := 0, 0
	add := func(part string) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (r == ',' || sep == CommasOrSpace && (r == ' ' || r == '\t' || r == '\n')):
			add(s[start:i])
			start = i + 1
		}
	}
	add(s[start:])
	return out
}
