package command

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFileAllFields(t *testing.T) {
	root, s, problems := loadProject(t, map[string]string{
		".claude/skills/audit-auth/SKILL.md": `---
name: audit-auth
description: Audit the authentication flow.
argument-hint: "[path]"
allowed-tools:
  - Read
  - Grep
  - Bash(git diff:*)
model: sonnet
context: fork
agent: Explore
disable-model-invocation: true
version: 1.0.0
license: MIT
---

Audit $ARGUMENTS and return only correctness risks.
`,
	})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	got, ok := s.Get("audit-auth")
	if !ok {
		t.Fatal("not loaded")
	}
	want := Command{
		Name:                   "audit-auth",
		Kind:                   KindSkill,
		Description:            "Audit the authentication flow.",
		ArgumentHint:           "[path]",
		AllowedTools:           []string{"Read", "Grep", "Bash(git diff:*)"},
		Model:                  "sonnet",
		Context:                "fork",
		Agent:                  "Explore",
		DisableModelInvocation: true,
		Body:                   "Audit $ARGUMENTS and return only correctness risks.",
		Path:                   filepath.Join(root, ".claude/skills/audit-auth/SKILL.md"),
		Source:                 SourceProject,
		Line:                   17,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
}

func TestParseFileAllowedTools(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		want        []string
	}{
		{"absent", "", nil},
		{"comma string", "allowed-tools: Read, Grep, Bash(git diff:*)", []string{"Read", "Grep", "Bash(git diff:*)"}},
		{"space string", "allowed-tools: Read Grep Bash(git diff *)", []string{"Read", "Grep", "Bash(git diff *)"}},
		{"comma inside parentheses", "allowed-tools: Bash(git diff, git log), Read", []string{"Bash(git diff, git log)", "Read"}},
		{"flow list", "allowed-tools: [Read, \"Bash(git add:*)\"]", []string{"Read", "Bash(git add:*)"}},
		{"block list keeps commas", "allowed-tools:\n  - Bash(a, b)\n  - Grep", []string{"Bash(a, b)", "Grep"}},
		{"empty string", "allowed-tools: \"\"", []string{}},
		{"empty list", "allowed-tools: []", []string{}},
		{"null", "allowed-tools:", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := parseFile("x.md", []byte("---\n"+tc.field+"\n---\nbody\n"), KindCommand, "x", SourceProject)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if diff := cmp.Diff(tc.want, c.AllowedTools); diff != "" {
				t.Errorf("allowed tools (-want +got):\n%s", diff)
			}
			if (tc.want == nil) != (c.AllowedTools == nil) {
				t.Errorf("nil-ness: got %#v, want %#v", c.AllowedTools, tc.want)
			}
		})
	}
}

func TestParseFileArgumentHint(t *testing.T) {
	for _, tc := range []struct {
		name, field, want string
		warned            bool
	}{
		{"quoted", `argument-hint: "[file] [mode]"`, "[file] [mode]", false},
		{"plain", "argument-hint: <file>", "<file>", false},
		// YAML reads these as lists or rejects them; Claude Code's docs
		// write them so, and mean the text.
		{"one bracket", "argument-hint: [file]", "[file]", false},
		{"one bracket with comment", "argument-hint: [file] # the target", "[file]", false},
		{"several brackets", "argument-hint: [pr-number] [priority] [assignee]", "[pr-number] [priority] [assignee]", true},
		{"block list", "argument-hint:\n  - file\n  - mode", "[file] [mode]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := parseFile("x.md", []byte("---\n"+tc.field+"\n---\nbody\n"), KindCommand, "x", SourceProject)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if c.ArgumentHint != tc.want {
				t.Errorf("hint %q; want %q", c.ArgumentHint, tc.want)
			}
			if warned := len(c.Warnings) > 0; warned != tc.warned {
				t.Errorf("warnings %q; want warned=%v", c.Warnings, tc.warned)
			}
		})
	}
}

func TestParseFileWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{
			"unknown fields with lines and suggestions",
			"---\ndescription: d\nallowed_tools: Read\nhooks: {}\n---\nbody\n",
			[]string{
				`x.md:3: unknown field "allowed_tools" ignored (did you mean "allowed-tools"?)`,
				`x.md:4: unknown field "hooks" ignored`,
			},
		},
		{
			"shell pre-execution is not run",
			"---\ndescription: d\n---\nStatus:\n!`git status --short`\nDiff: !`git diff HEAD`\nA `code` span and wow!`x` are fine.\n```!\nls\n```\n",
			[]string{
				"x.md:5: !`git status --short` is Claude Code's shell pre-execution; cadre does not run it, so the model sees the text as written",
				"x.md:6: !`git diff HEAD` is Claude Code's shell pre-execution; cadre does not run it, so the model sees the text as written",
				"x.md:8: a ```! block is Claude Code's shell pre-execution; cadre does not run it, so the model sees the text as written",
			},
		},
		{
			"agent without fork",
			"---\ndescription: d\nagent: Explore\n---\nbody\n",
			[]string{`x.md:3: agent: only used with "context: fork"; ignored here`},
		},
		{
			"lenient YAML",
			"---\ndescription: Use it: when asked\n---\nbody\n",
			[]string{`x.md:2: frontmatter is not valid YAML (mapping values are not allowed in this context); read as Claude Code reads it, with the value on line 2 quoted: add the quotes to silence this warning`},
		},
		{
			"command name field differs",
			"---\nname: Other\n---\nbody\n",
			[]string{`x.md:2: name: "Other" differs from "x", the name its file name gives; it is invoked as /x`},
		},
		{"name field matches when folded", "---\nname: X\n---\nbody\n", nil},
		{"clean", "---\ndescription: d\ncontext: fork\nagent: Explore\n---\nbody $1\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := parseFile("x.md", []byte(tc.file), KindCommand, "x", SourceProject)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if diff := cmp.Diff(tc.want, c.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFileDescription(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, tc := range []struct {
		name, file, want string
	}{
		{"frontmatter wins", "---\ndescription: From the field.\n---\n# Heading\n", "From the field."},
		{"first body line", "\n\nReview the code.\nMore.\n", "Review the code."},
		{"heading marks removed", "---\nmodel: m\n---\n## Review the code\n", "Review the code"},
		{"blank description falls back", "---\ndescription:\n---\nFrom the body\n", "From the body"},
		{"empty", "---\nmodel: m\n---\n", ""},
		{"shortened to 100 characters", long, strings.Repeat("word ", 19) + "word…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := parseFile("x.md", []byte(tc.file), KindCommand, "x", SourceProject)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if c.Description != tc.want {
				t.Errorf("description %q; want %q", c.Description, tc.want)
			}
			if n := len([]rune(c.Description)); n > maxDescription {
				t.Errorf("description has %d characters", n)
			}
		})
	}
}

func TestParseFileSkillNeedsFrontmatterDescription(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		wantLine   int
	}{
		{"no frontmatter", "A body line is not enough.\n", 1},
		{"blank field", "---\nname: x\ndescription: \"\"\n---\nbody\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := parseFile("SKILL.md", []byte(tc.file), KindSkill, "x", SourceUser)
			if len(problems) != 1 || problems[0].Line != tc.wantLine || !strings.Contains(problems[0].Message, "needs a description") {
				t.Errorf("problems = %v; want one missing-description problem on line %d", problems, tc.wantLine)
			}
		})
	}
}
