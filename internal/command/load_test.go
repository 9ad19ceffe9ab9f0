package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// places are the locations Load reads, lowest precedence first; "user/"
// paths go under the user dir, the rest under the project.
var places = []struct {
	rel    string // file for a command or skill named "x"
	kind   Kind
	source string
}{
	{"user/commands/x.md", KindCommand, SourceUser},
	{"user/skills/x/SKILL.md", KindSkill, SourceUser},
	{"project/.claude/commands/x.md", KindCommand, SourceProject},
	{"project/.claude/skills/x/SKILL.md", KindSkill, SourceProject},
	{"project/.cadre/commands/x.md", KindCommand, SourceProject},
	{"project/.cadre/skills/x/SKILL.md", KindSkill, SourceProject},
}

func TestLoadPrecedence(t *testing.T) {
	for top := range places {
		t.Run(places[top].rel, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{}
			for i := 0; i <= top; i++ {
				files[places[i].rel] = fmt.Sprintf("---\ndescription: from %d\n---\nbody %d\n", i, i)
			}
			// Each place also has a command of its own, which nothing shadows.
			for i, p := range places {
				own := strings.Replace(p.rel, "x", fmt.Sprintf("own%d", i), 1)
				files[own] = fmt.Sprintf("---\ndescription: own %d\n---\nown\n", i)
			}
			writeFiles(t, root, files)
			s, problems := Load(filepath.Join(root, "project"), filepath.Join(root, "user"))
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			c, ok := s.Get("x")
			if !ok {
				t.Fatal("x not loaded")
			}
			want := places[top]
			if c.Description != fmt.Sprintf("from %d", top) || c.Kind != want.kind || c.Source != want.source ||
				c.Path != filepath.Join(root, filepath.FromSlash(want.rel)) {
				t.Errorf("x = %+v; want the one from %s (%s, %s)", c, want.rel, want.kind, want.source)
			}
			wantNames := []string{"own0", "own1", "own2", "own3", "own4", "own5", "x"}
			if diff := cmp.Diff(wantNames, names(s)); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadEmptyDirsSkipSources(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"user/commands/u.md":           "user\n",
		"project/.cadre/commands/p.md": "project\n",
	})
	for _, tc := range []struct {
		cwd, user string
		want      []string
	}{
		{"", "", nil},
		{filepath.Join(root, "project"), "", []string{"p"}},
		{"", filepath.Join(root, "user"), []string{"u"}},
		{filepath.Join(root, "missing"), filepath.Join(root, "missing"), nil},
	} {
		s, problems := Load(tc.cwd, tc.user)
		if len(problems) > 0 {
			t.Errorf("Load(%q, %q) problems: %v", tc.cwd, tc.user, problems)
		}
		if diff := cmp.Diff(tc.want, names(s)); diff != "" {
			t.Errorf("Load(%q, %q) names (-want +got):\n%s", tc.cwd, tc.user, diff)
		}
	}
}

func TestLoadNamespaces(t *testing.T) {
	_, s, problems := loadProject(t, map[string]string{
		".claude/commands/top.md":                "top\n",
		".claude/commands/frontend/component.md": "component\n",
		".claude/commands/a/b/c.md":              "deep\n",
		".claude/commands/Upper/Case.md":         "folded\n",
		".claude/commands/.hidden/secret.md":     "skipped: dot directory\n",
		".claude/commands/.draft.md":             "skipped: dot file\n",
		".claude/commands/notes.txt":             "skipped: not markdown\n",
	})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := []string{"a:b:c", "frontend:component", "top", "upper:case"}
	if diff := cmp.Diff(want, names(s)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if c, ok := s.Get("Frontend:Component"); !ok || c.Body != "component" {
		t.Errorf("Get is not case-insensitive: %+v, %v", c, ok)
	}
}

func TestLoadSkills(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".cadre/skills/review/SKILL.md":           "---\nname: review\ndescription: Reviews code.\n---\nRead ${CADRE_SKILL_DIR}/checklist.md\n",
		".cadre/skills/review/checklist.md":       "---\ndescription: a supporting file, not a skill\n---\n",
		".cadre/skills/review/scripts/run.md":     "supporting\n",
		".cadre/skills/Renamed/SKILL.md":          "---\nname: other\ndescription: Named by its folder.\n---\nbody\n",
		".cadre/skills/nodesc/SKILL.md":           "---\nname: nodesc\n---\nA skill must describe itself in frontmatter.\n",
		".cadre/skills/lowercase/skill.md":        "---\ndescription: only SKILL.md counts\n---\n",
		".cadre/skills/empty/README.md":           "no SKILL.md here\n",
		".cadre/skills/loose.md":                  "---\ndescription: not in a folder\n---\n",
		".cadre/skills/.hidden/SKILL.md":          "---\ndescription: dot folder\n---\n",
		".claude/commands/review/from-command.md": "a command namespaced like the skill\n",
	})
	wantProblems := []string{"ROOT/.cadre/skills/nodesc/SKILL.md:1: description: a skill needs a description (say what it does and when to use it)"}
	if diff := cmp.Diff(wantProblems, problemStrings(root, problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	want := []string{"renamed", "review", "review:from-command"}
	if diff := cmp.Diff(want, names(s)); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	review, _ := s.Get("review")
	if review.Kind != KindSkill || review.Description != "Reviews code." || len(review.Warnings) != 0 {
		t.Errorf("review = %+v", review)
	}
	renamed, _ := s.Get("renamed")
	wantWarn := []string{fmt.Sprintf("%s:2: name: \"other\" differs from \"renamed\", the name its folder name gives; it is invoked as /renamed", renamed.Path)}
	if diff := cmp.Diff(wantWarn, renamed.Warnings); diff != "" {
		t.Errorf("renamed warnings (-want +got):\n%s", diff)
	}
}

func TestLoadSymlinkedSkillFolder(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"shared/linked/SKILL.md": "---\ndescription: Shared.\n---\nbody\n"})
	if err := os.MkdirAll(filepath.Join(root, "p/.claude/skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "shared/linked"), filepath.Join(root, "p/.claude/skills/linked")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	// A link loop in a commands tree must not trap the walk.
	if err := os.MkdirAll(filepath.Join(root, "p/.claude/commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "p/.claude/commands"), filepath.Join(root, "p/.claude/commands/loop")); err != nil {
		t.Fatal(err)
	}
	s, problems := Load(filepath.Join(root, "p"), "")
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if diff := cmp.Diff([]string{"linked"}, names(s)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestLoadBadFileReportedOthersLoad(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".claude/commands/good.md":     "---\ndescription: fine\n---\nok\n",
		".claude/commands/badyaml.md":  "---\ndescription: fine\nallowed-tools: [Read, Grep\nmodel: x\n---\nbody\n",
		".claude/commands/unclosed.md": "---\ndescription: never closed\nbody\n",
		".claude/commands/context.md":  "---\ndescription: d\ncontext: inline\n---\nbody\n",
		".claude/commands/types.md":    "---\ndescription: [a, b]\ndisable-model-invocation: maybe\nallowed-tools: 3\n---\nbody\n",
		".claude/commands/twice.md":    "---\nmodel: a\nmodel: b\n---\nbody\n",
		".claude/commands/notmap.md":   "---\n- a\n- b\n---\nbody\n",
	})
	want := []string{
		`ROOT/.claude/commands/badyaml.md:3: frontmatter is not valid YAML: did not find expected ',' or ']'`,
		`ROOT/.claude/commands/context.md:3: context: "inline" is not a context: want "fork" (run in a forked child) or no context field (run in the conversation)`,
		`ROOT/.claude/commands/notmap.md:2: frontmatter is not valid YAML: the frontmatter must be a mapping of fields, not a list`,
		`ROOT/.claude/commands/twice.md:3: model: given twice (first on line 2)`,
		`ROOT/.claude/commands/types.md:2: description: want a string, got a list`,
		`ROOT/.claude/commands/types.md:3: disable-model-invocation: want true or false, got "maybe"`,
		`ROOT/.claude/commands/types.md:4: allowed-tools: want a list of strings or a comma-separated string, got the number 3`,
		`ROOT/.claude/commands/unclosed.md:1: frontmatter is not closed: no "---" line ends the block that line 1 opens`,
	}
	if diff := cmp.Diff(want, problemStrings(root, problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"good"}, names(s)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestLoadInvalidNeverShadowsValid(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".claude/commands/deploy.md": "---\ndescription: working\n---\nship it\n",
		".cadre/commands/deploy.md":  "---\ncontext: sideways\n---\nbroken override\n",
	})
	if len(problems) != 1 || !strings.HasPrefix(problemStrings(root, problems)[0], "ROOT/.cadre/commands/deploy.md:2: context:") {
		t.Errorf("problems = %v", problems)
	}
	if c, ok := s.Get("deploy"); !ok || c.Description != "working" {
		t.Errorf("deploy = %+v, %v; want the working .claude one", c, ok)
	}
}

func TestLoadInvalidNames(t *testing.T) {
	long := strings.Repeat("a", 65)
	root, s, problems := loadProject(t, map[string]string{
		".claude/commands/has space.md":    "x\n",
		".claude/commands/-dash.md":        "x\n",
		".claude/commands/dot.ted.md":      "x\n",
		".claude/commands/" + long + ".md": "x\n",
		".claude/commands/ok_name-1.md":    "x\n",
		".claude/skills/My Skill/SKILL.md": "---\ndescription: d\n---\nx\n",
	})
	msg := func(path, name string) string {
		return fmt.Sprintf("ROOT/%s:1: command name %q is not valid: want 1 to 64 letters, digits, '_', '-' or ':', starting with a letter or digit (rename the file or folder)", path, name)
	}
	want := []string{
		msg(".claude/commands/-dash.md", "-dash"),
		msg(".claude/commands/"+long+".md", long),
		msg(".claude/commands/dot.ted.md", "dot.ted"),
		msg(".claude/commands/has space.md", "has space"),
		msg(".claude/skills/My Skill/SKILL.md", "my skill"),
	}
	if diff := cmp.Diff(want, problemStrings(root, problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ok_name-1"}, names(s)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestProblemError(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "a.md", Line: 3, Message: "bad"}, "a.md:3: bad"},
		{Problem{Path: "dir", Message: "unreadable"}, "dir: unreadable"},
		{Problem{Message: "bare"}, "bare"},
	} {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q; want %q", tc.p, got, tc.want)
		}
	}
}

func TestNilSet(t *testing.T) {
	var s *Set
	if _, ok := s.Get("x"); ok || s.All() != nil {
		t.Error("a nil Set should be empty")
	}
}

func TestLoadUnusableFiles(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".claude/commands":           "a file where a directory belongs\n",
		".cadre/commands/huge.md":    strings.Repeat("x", maxFileSize+1),
		".cadre/commands/fine.md":    "---\ndisable-model-invocation: \"true\"\n---\nok\n",
		".cadre/skills/big/SKILL.md": strings.Repeat("y", maxFileSize+1),
	})
	want := []string{
		"ROOT/.claude/commands: is not a directory: commands are *.md files in a commands directory",
		"ROOT/.cadre/commands/huge.md: cannot read command file: larger than 1 MiB",
		"ROOT/.cadre/skills/big/SKILL.md: cannot read skill file: larger than 1 MiB",
	}
	if diff := cmp.Diff(want, problemStrings(root, problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if c, ok := s.Get("fine"); !ok || !c.DisableModelInvocation {
		t.Errorf("fine = %+v, %v; want loaded with disable-model-invocation from the string \"true\"", c, ok)
	}
}

func TestOpenCodeSkillFolders(t *testing.T) {
	dir := t.TempDir()
	for rel, body := range map[string]string{
		".opencode/skill/lint/SKILL.md":   "---\ndescription: Lint from OpenCode\n---\nlint\n",
		".opencode/skills/style/SKILL.md": "---\ndescription: Style from OpenCode\n---\nstyle\n",
		".claude/skills/style/SKILL.md":   "---\ndescription: Style from Claude\n---\nstyle\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, problems := Load(dir, "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if c, ok := set.Get("lint"); !ok || c.Kind != KindSkill {
		t.Error("the .opencode/skill skill was not loaded")
	}
	if c, _ := set.Get("style"); c.Description != "Style from Claude" {
		t.Errorf("style is %q: .claude must win over .opencode", c.Description)
	}
}
