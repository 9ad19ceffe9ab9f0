package command

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	type result struct {
		Name, Args string
		OK         bool
	}
	for _, tc := range []struct {
		prompt string
		want   result
	}{
		{"/audit src/ --deep", result{"audit", "src/ --deep", true}},
		{"/audit", result{"audit", "", true}},
		{"/Audit  spaced   args  ", result{"audit", "spaced   args", true}},
		{"/frontend:component Button", result{"frontend:component", "Button", true}},
		{"/review\nline one\nline two\n", result{"review", "line one\nline two", true}},
		{"/review\targ", result{"review", "arg", true}},
		{"/etc/passwd is empty", result{}},
		{"/usr/bin/env", result{}},
		{"/review/ x", result{}},
		{"hello", result{}},
		{" /audit", result{}},
		{"/", result{}},
		{"/ audit", result{}},
		{"/-x", result{}},
		{"/héllo", result{}},
		{"", result{}},
	} {
		name, args, ok := Parse(tc.prompt)
		if diff := cmp.Diff(tc.want, result{name, args, ok}); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.prompt, diff)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b\tc\n", []string{"a", "b", "c"}},
		{`"hello world" second`, []string{"hello world", "second"}},
		{`'single "inner"' x`, []string{`single "inner"`, "x"}},
		{`pre"quoted part"post`, []string{"prequoted partpost"}},
		{`"" empty`, []string{"", "empty"}},
		{`escaped\ space "a \"q\" b"`, []string{"escaped space", `a "q" b`}},
		{`C:\dir\file 'a\b'`, []string{`C:\dir\file`, `a\b`}},
		{`"unclosed rest of it`, []string{"unclosed rest of it"}},
	} {
		if diff := cmp.Diff(tc.want, splitArgs(tc.in)); diff != "" {
			t.Errorf("splitArgs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestExpand(t *testing.T) {
	skillPath := filepath.Join("home", "skills", "review", "SKILL.md")
	skillDir := filepath.Dir(skillPath)
	for _, tc := range []struct {
		name string
		cmd  Command
		args string
		want string
	}{
		{"all arguments", Command{Body: "Fix issue $ARGUMENTS now."}, `42 "high prio"`, `Fix issue 42 "high prio" now.`},
		{"all arguments twice", Command{Body: "$ARGUMENTS / $ARGUMENTS"}, "a b", "a b / a b"},
		{"positional with quotes", Command{Body: "Migrate $1 from $2 to $3."}, `"search bar" React Vue`, "Migrate search bar from React to Vue."},
		{"missing positional is empty", Command{Body: "[$1] [$2]"}, "only", "[only] []"},
		{"no args, placeholders empty", Command{Body: "Review $ARGUMENTS."}, "", "Review ."},
		{"zero-based when $0 is used", Command{Body: "Migrate $0 from $1 to $2."}, "Bar React Vue", "Migrate Bar from React to Vue."},
		{"indexed from zero", Command{Body: "first=$ARGUMENTS[0] second=$ARGUMENTS[1] none=$ARGUMENTS[5]"}, "a 'b c'", "first=a second=b c none="},
		{"two-digit positional", Command{Body: "$10"}, "1 2 3 4 5 6 7 8 9 ten", "ten"},
		{"$N before a word is text", Command{Body: "$1x $1_ $1[ $1."}, "A", "$1x $1_ $1[ A."},
		{"arguments are not expanded again", Command{Body: "$1 and $2"}, `'$2' '$ARGUMENTS'`, "$2 and $ARGUMENTS"},
		{"appended when no placeholder", Command{Body: "Review the code."}, "src/ --deep", "Review the code.\n\nARGUMENTS: src/ --deep"},
		{"not appended without args", Command{Body: "Review the code."}, "  ", "Review the code."},
		{"appended to an empty body", Command{}, "x", "ARGUMENTS: x"},
		{"placeholder used, nothing appended", Command{Body: "Only $1."}, "a b", "Only a."},
		{
			"skill dir",
			Command{Kind: KindSkill, Path: skillPath, Body: "Run ${CLAUDE_SKILL_DIR}/run.sh and read ${CADRE_SKILL_DIR}/ref.md"},
			"",
			"Run " + skillDir + "/run.sh and read " + skillDir + "/ref.md",
		},
		{
			"skill dir is not an argument placeholder",
			Command{Kind: KindSkill, Path: skillPath, Body: "See ${CADRE_SKILL_DIR}."},
			"x",
			"See " + skillDir + ".\n\nARGUMENTS: x",
		},
		{"no skill dir for a command", Command{Kind: KindCommand, Path: "c.md", Body: "${CLAUDE_SKILL_DIR}"}, "", "${CLAUDE_SKILL_DIR}"},
		{"shell pre-execution left as written", Command{Body: "!`git status` for $1"}, "a", "!`git status` for a"},
		{"other variables left alone", Command{Body: "${CLAUDE_SESSION_ID} $HOME"}, "", "${CLAUDE_SESSION_ID} $HOME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.cmd.Expand(tc.args)); diff != "" {
				t.Errorf("Expand(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestLoadThenExpand runs a loaded skill end to end.
func TestLoadThenExpand(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".cadre/skills/fix/SKILL.md": "---\ndescription: Fix an issue.\n---\nFix issue $1 using ${CADRE_SKILL_DIR}/notes.md.\n",
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	name, args, ok := Parse("/fix 42")
	c, found := s.Get(name)
	if !ok || !found {
		t.Fatalf("Parse/Get: %v %v", ok, found)
	}
	want := "Fix issue 42 using " + filepath.Join(root, ".cadre/skills/fix") + "/notes.md."
	if got := c.Expand(args); got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}
