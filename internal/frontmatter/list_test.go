package frontmatter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestSplitList(t *testing.T) {
	tests := []struct {
		name, in      string
		commas, space []string // under Commas, under CommasOrSpace
	}{
		{"comma string", "Read, Grep,Glob", []string{"Read", "Grep", "Glob"}, []string{"Read", "Grep", "Glob"}},
		{"space string", "Read Grep Bash(git diff *)",
			[]string{"Read Grep Bash(git diff *)"}, []string{"Read", "Grep", "Bash(git diff *)"}},
		{"comma inside parentheses", "Bash(git diff, git log), Read",
			[]string{"Bash(git diff, git log)", "Read"}, []string{"Bash(git diff, git log)", "Read"}},
		{"nested parentheses", "Bash(a (b, c) d), Read", []string{"Bash(a (b, c) d)", "Read"}, []string{"Bash(a (b, c) d)", "Read"}},
		{"pattern with a colon", "Read, Grep, Bash(git diff:*)",
			[]string{"Read", "Grep", "Bash(git diff:*)"}, []string{"Read", "Grep", "Bash(git diff:*)"}},
		{"tabs and newlines", "Read,\tGrep\nGlob", []string{"Read", "Grep\nGlob"}, []string{"Read", "Grep", "Glob"}},
		{"empty entries dropped", " , Read,, ,", []string{"Read"}, []string{"Read"}},
		{"stray closing parenthesis", "Read), Grep", []string{"Read)", "Grep"}, []string{"Read)", "Grep"}},
		{"unclosed parenthesis keeps the rest", "Bash(git, Read", []string{"Bash(git, Read"}, []string{"Bash(git, Read"}},
		{"star", "*", []string{"*"}, []string{"*"}},
		{"empty string", "", []string{}, []string{}},
		{"blank string", "  ", []string{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				sep  Sep
				want []string
			}{{Commas, tt.commas}, {CommasOrSpace, tt.space}} {
				got := SplitList(tt.in, c.sep)
				if diff := cmp.Diff(c.want, got); diff != "" || got == nil {
					t.Errorf("SplitList(%q, %d) = %#v (-want +got):\n%s", tt.in, c.sep, got, diff)
				}
			}
		})
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
		problems   []string // "key: msg"
	}{
		{"string", "Read, Grep", []string{"Read", "Grep"}, nil},
		{"flow list", `[Read, "Bash(git add:*)"]`, []string{"Read", "Bash(git add:*)"}, nil},
		{"block list keeps commas", "\n  - Bash(a, b)\n  - Grep", []string{"Bash(a, b)", "Grep"}, nil},
		{"list entries trimmed, empty dropped", `[" Read ", "", Grep]`, []string{"Read", "Grep"}, nil},
		{"aliased entry", "[&r Read, *r]", []string{"Read", "Read"}, nil},
		{"empty string is none", `""`, []string{}, nil},
		{"empty list is none", "[]", []string{}, nil},
		{"nothing is not set", "", nil, nil},
		{"a number", "3", nil, []string{"tools: want a list of strings or a comma-separated string, got the number 3"}},
		{"a mapping", "{a: b}", nil, []string{"tools: want a list of strings or a comma-separated string, got a mapping"}},
		{"bad entries reported, good kept", "[Read, 4, [x], Grep]", []string{"Read", "Grep"}, []string{
			"tools[1]: want a list of strings or a comma-separated string, got the number 4",
			"tools[2]: want a list of strings or a comma-separated string, got a list",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte("tools: "+tt.yaml+"\n"), &doc); err != nil {
				t.Fatal(err)
			}
			got, bad := List(Deref(doc.Content[0].Content[1]), "tools", Commas)
			if diff := cmp.Diff(tt.want, got); diff != "" || (got == nil) != (tt.want == nil) {
				t.Errorf("list = %#v (-want +got):\n%s", got, diff)
			}
			var problems []string
			for _, p := range bad {
				if p.Node == nil || p.Node.Line == 0 {
					t.Errorf("problem %q has no node to give its line", p.Msg)
				}
				problems = append(problems, p.Key+": "+p.Msg)
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
