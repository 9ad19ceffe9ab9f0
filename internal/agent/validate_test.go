package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestValidationErrors(t *testing.T) {
	const head = "---\nname: x\ndescription: d\n" // fields below start on line 4
	tests := []struct {
		name, content string
		want          []string // "line: message" substrings of the problems, in order
	}{
		{"bad permissionMode", head + "permissionMode: yolo\n---\n",
			[]string{`4: permissionMode: "yolo" is not valid: want one of plan, default, acceptEdits, bypassPermissions`}},
		{"bubble is for forks", head + "permissionMode: bubble\n---\n",
			[]string{`4: permissionMode: "bubble" is reserved for the fork agent`}},
		{"bad isolation", head + "isolation: container\n---\n",
			[]string{`4: isolation: "container" is not valid: want one of worktree, remote`}},
		{"bad memory", head + "memory: global\n---\n",
			[]string{`4: memory: "global" is not valid: want one of user, project, local`}},
		{"bad mode", head + "mode: secondary\n---\n",
			[]string{`4: mode: "secondary" is not valid: want one of primary, subagent, all`}},
		{"negative maxTurns", head + "maxTurns: -3\n---\n",
			[]string{"4: maxTurns: must not be negative, got -3"}},
		{"maxTurns not a number", head + "maxTurns: many\n---\n",
			[]string{`4: maxTurns: want a whole number, got "many"`}},
		{"tools not a list", head + "tools: 42\n---\n",
			[]string{"4: tools: want a list of strings or a comma-separated string, got the number 42"}},
		{"tools map in a Claude file", head + "tools:\n  Read: true\n---\n",
			[]string{"5: tools: want a list of strings or a comma-separated string, got a mapping"}},
		{"tools nested list", head + "tools:\n  - [Read]\n---\n",
			[]string{"5: tools[0]: want a list of strings or a comma-separated string, got a list"}},
		{"background not a bool", head + "background: sometimes\n---\n",
			[]string{`4: background: want true or false, got "sometimes"`}},
		{"hidden not a bool", head + "hidden: 1\n---\n",
			[]string{"4: hidden: want true or false, got the number 1"}},
		{"temperature not a number", head + "temperature: warm\n---\n",
			[]string{`4: temperature: want a number, got "warm"`}},
		{"model not a string", head + "model: [a, b]\n---\n",
			[]string{"4: model: want a string, got a list"}},
		{"bad workspace mode", head + "workspace:\n  mode: private\n---\n",
			[]string{`5: workspace.mode: "private" is not valid: want one of isolated, shared`}},
		{"workspace a list", head + "workspace: [a]\n---\n",
			[]string{"4: workspace: want a mapping with mode (isolated or shared) and path, got a list"}},
		{"bad url", head + "url: agent-server:8080/x\n---\n",
			[]string{`4: url: "agent-server:8080/x" is not an absolute http or https URL`}},
		{"ftp url", head + "url: ftp://host/x\n---\n",
			[]string{`4: url: "ftp://host/x" is not an absolute http or https URL`}},
		{"headers not a map", head + "url: http://h\nheaders: [a]\n---\n",
			[]string{"5: headers: want a mapping of header names to values, got a list"}},
		{"hooks not a map", head + "hooks: [a]\n---\n",
			[]string{"4: hooks: want a mapping of hook events to matchers, got a list"}},
		{"hooks bad matcher", head + "hooks:\n  PreToolUse:\n    - matcher: \"([\"\n      hooks: [{type: command, command: x}]\n---\n",
			[]string{"5: hooks: hooks.PreToolUse[0].matcher: matcher \"([\" is not a valid regular expression"}},
		{"hooks no command", head + "hooks:\n  Stop:\n    - hooks: [{type: command}]\n---\n",
			[]string{"5: hooks: hooks.Stop[0].hooks[0].command: empty"}},
		{"mcpServers entry", head + "mcpServers:\n  - 3\n---\n",
			[]string{"5: mcpServers[0]: want a server name or a mapping of name to server config, got the number 3"}},
		{"duplicate field", head + "model: sonnet\nmodel: opus\n---\n",
			[]string{`5: model: given twice (first on line 4)`}},
		{"bad name", "---\nname: ../etc/passwd\ndescription: d\n---\n",
			[]string{`2: name: agent name "../etc/passwd" is refused: it contains a path separator or ".." (path traversal)`}},
		{"missing name", "---\ndescription: d\n---\n",
			[]string{"1: name: is required in a Claude Code agent file"}},
		{"missing description", "---\nname: x\n---\n",
			[]string{"1: description: is required"}},
		{"empty description", "---\nname: x\ndescription: \"  \"\n---\n",
			[]string{"3: description: is required"}},
		{"no frontmatter", "# Just notes\n",
			[]string{`1: no frontmatter: an agent file starts with a "---" line`}},
		{"unclosed frontmatter", "---\nname: x\ndescription: d\n",
			[]string{`1: frontmatter is not closed`}},
		{"frontmatter a list", "---\n- a\n- b\n---\n",
			[]string{"2: frontmatter is not valid YAML: line 2: the frontmatter must be a mapping of fields, not a list"}},
		{"several at once", head + "isolation: vm\nmaxTurns: -1\n---\n",
			[]string{`4: isolation: "vm" is not valid`, "5: maxTurns: must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, r, root := loadOne(t, ".cadre/agents/x.md", tt.content)
			if e.Err == nil {
				t.Fatalf("loaded without error: %+v", e.Definition)
			}
			if e.Active {
				t.Error("an invalid entry is active")
			}
			if _, ok := r.Get("x"); ok {
				t.Error("Get found the invalid agent")
			}
			probs := r.Problems()
			if len(probs) != len(tt.want) {
				t.Fatalf("problems = %v, want %d: %q", probs, len(tt.want), tt.want)
			}
			prefix := root + "/.cadre/agents/x.md:"
			for i, w := range tt.want {
				got := probs[i].Error()
				if !strings.HasPrefix(got, prefix+w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got, prefix+w)
				}
				var p *Problem
				if !errors.As(e.Err, &p) {
					t.Errorf("entry error %T is not a *Problem", e.Err)
				}
				if !strings.Contains(e.Err.Error(), probs[i].Message) {
					t.Errorf("entry error %q lacks problem %q", e.Err, probs[i].Message)
				}
			}
		})
	}
}

func TestUnknownFieldWarnings(t *testing.T) {
	d := mustLoad(t, ".claude/agents/x.md",
		"---\nname: x\ndescription: d\ntool: Read\nfavourite: blue\nworkspace:\n  mode: shared\n  size: 3\nmaxTurns: 3\nmaxIters: 4\n---\nbody\n")
	checkWarnings(t, d.Warnings, []string{
		`x.md:4: unknown field "tool" ignored (did you mean "tools"?)`,
		`x.md:5: unknown field "favourite" ignored`,
		`x.md:8: workspace: unknown field "size" ignored (want mode or path)`,
		`x.md:10: maxIters: ignored: maxTurns already sets the turn limit`,
	})
	if strings.Contains(d.Warnings[1], "did you mean") {
		t.Errorf("warning suggests a field for a far-off name: %q", d.Warnings[1])
	}
	if d.MaxTurns != 3 {
		t.Errorf("MaxTurns = %d, want 3", d.MaxTurns)
	}
}

func TestBadYAMLReportedWithLineOthersLoad(t *testing.T) {
	root := tree(t, map[string]string{
		".claude/agents/a-good.md": "---\nname: a-good\ndescription: fine\n---\n",
		".claude/agents/broken.md": "---\nname: broken\ndescription: d\nworkspace:\n  mode: shared\n path: x\n---\n", // YAML names the block, line 5
		".claude/agents/flow.md":   "---\nname: flow\ndescription: d\ntools: [Read, Grep\n---\n",
		".claude/agents/z-good.md": "---\nname: z-good\ndescription: fine\n---\n",
	})
	r := Load(LoadOptions{Cwd: root})
	for _, name := range []string{"a-good", "z-good", "general-purpose"} {
		if _, ok := r.Get(name); !ok {
			t.Errorf("%s did not load", name)
		}
	}
	probs := r.Problems()
	if len(probs) != 2 {
		t.Fatalf("problems = %v, want 2", probs)
	}
	want := []string{
		root + "/.claude/agents/broken.md:5: frontmatter is not valid YAML: line 5: did not find expected key",
		root + "/.claude/agents/flow.md:",
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i].Error(), w) {
			t.Errorf("problem %d = %q, want prefix %q", i, probs[i].Error(), w)
		}
	}
	if probs[1].Line < 2 || !strings.Contains(probs[1].Message, "frontmatter is not valid YAML") {
		t.Errorf("flow problem = %+v, want a YAML error with a file line", probs[1])
	}
	if probs[0].Name != "broken" {
		t.Errorf("problem names %q, want broken (from the file name)", probs[0].Name)
	}
}

func TestDeclarationModesInFiles(t *testing.T) {
	// S-D3 in every file format: url excludes workspace.path and a body;
	// workspace.path with a body ignores the body with a warning.
	type fileCase struct {
		dir, head string // head: frontmatter up to description
	}
	formats := map[string]fileCase{
		"claude":   {".claude/agents/", "---\nname: x\ndescription: d\n"},
		"cadre":    {".cadre/agents/", "---\nname: x\ndescription: d\n"},
		"opencode": {".opencode/agent/", "---\ndescription: d\nmode: subagent\n"},
		"harness":  {"workspace/subagents/", "---\ndescription: d\nmodel: m\n"},
	}
	tests := []struct {
		name, fields, body string
		wantErr, wantWarn  string
		wantPrompt         string
	}{
		{name: "url and body", fields: "url: https://agents.example/r\n", body: "Prompt.",
			wantErr: "4: url: cannot be combined with a body"},
		{name: "url and workspace path", fields: "url: https://agents.example/r\nworkspace:\n  path: ./defs/r\n",
			wantErr: "4: url: cannot be combined with workspace.path"},
		{name: "workspace path and body", fields: "workspace:\n  path: ./defs/r\n", body: "Prompt.",
			wantWarn: "4: workspace: body ignored: workspace AGENTS.md is the prompt base", wantPrompt: ""},
		{name: "workspace mode and body are fine", fields: "workspace:\n  mode: isolated\n", body: "Prompt.",
			wantPrompt: "Prompt."},
		{name: "url alone", fields: "url: https://agents.example/r\n"},
	}
	for fname, f := range formats {
		for _, tt := range tests {
			t.Run(fname+"/"+tt.name, func(t *testing.T) {
				e, _, root := loadOne(t, f.dir+"x.md", f.head+tt.fields+"---\n"+tt.body+"\n")
				prefix := root + "/" + f.dir + "x.md:"
				if tt.wantErr != "" {
					if e.Err == nil || !strings.Contains(e.Err.Error(), prefix+tt.wantErr) {
						t.Fatalf("err = %v, want %q", e.Err, prefix+tt.wantErr)
					}
					return
				}
				if e.Err != nil {
					t.Fatal(e.Err)
				}
				var want []string
				if tt.wantWarn != "" {
					want = []string{prefix + tt.wantWarn}
				}
				checkWarnings(t, e.Definition.Warnings, want)
				if e.Definition.Prompt != tt.wantPrompt {
					t.Errorf("prompt = %q, want %q", e.Definition.Prompt, tt.wantPrompt)
				}
			})
		}
	}
}

func TestDeclarationModesInSettings(t *testing.T) {
	r := Load(LoadOptions{SettingsFile: "s.json", Settings: []byte(`{
		"a": {"description": "d", "url": "https://x.example", "workspace": {"path": "defs/a"}},
		"b": {"description": "d", "workspace": {"path": "defs/b"}, "prompt": "ignored"},
		"c": {"description": "d", "url": "http://127.0.0.1:9000/agent", "headers": {"Authorization": "Bearer t"}},
		"d": {"description": "d", "headers": {"X": "y"}}
	}`)})
	probs := r.Problems()
	if len(probs) != 1 || probs[0].Error() != "s.json: agents.a.url: cannot be combined with workspace.path: a remote agent has no definition workspace" {
		t.Fatalf("problems = %v", probs)
	}
	b, _ := r.Get("b")
	if b.Prompt != "" {
		t.Errorf("b prompt = %q, want it ignored", b.Prompt)
	}
	checkWarnings(t, b.Warnings, []string{"s.json: agents.b.workspace: body ignored: workspace AGENTS.md is the prompt base"})
	if b.Workspace == nil || b.Workspace.Mode != WorkspaceShared {
		t.Errorf("b workspace = %+v, want the shared default", b.Workspace)
	}
	c, _ := r.Get("c")
	if c.URL != "http://127.0.0.1:9000/agent" || c.Headers["Authorization"] != "Bearer t" {
		t.Errorf("c = %+v", c)
	}
	d, _ := r.Get("d")
	checkWarnings(t, d.Warnings, []string{"s.json: agents.d.headers: ignored"})
}

func TestFieldAliases(t *testing.T) {
	tests := []struct {
		name, fields string
		effort       string
		maxTurns     int
		warnings     []string
	}{
		{name: "thinking is effort", fields: "thinking: medium\n", effort: "medium"},
		{name: "numeric effort", fields: "effort: 2048\n", effort: "2048"},
		{name: "effort then thinking", fields: "effort: low\nthinking: high\n", effort: "low",
			warnings: []string{"x.md:5: thinking: ignored: effort already sets the effort"}},
		{name: "maxIters is maxTurns", fields: "maxIters: 6\n", maxTurns: 6},
		{name: "steps only in OpenCode files", fields: "steps: 6\n",
			warnings: []string{`x.md:4: unknown field "steps" ignored`}},
		{name: "star tools in plain YAML", fields: "tools: *\n",
			warnings: []string{"x.md:4: frontmatter is not valid YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustLoad(t, ".cadre/agents/x.md", "---\nname: x\ndescription: d\n"+tt.fields+"---\n")
			if d.Effort != tt.effort || d.MaxTurns != tt.maxTurns {
				t.Errorf("effort %q, maxTurns %d; want %q, %d", d.Effort, d.MaxTurns, tt.effort, tt.maxTurns)
			}
			checkWarnings(t, d.Warnings, tt.warnings)
		})
	}
}

// TestHooksThatCannotRunWarn: an agent file's hooks that cadre cannot run
// are said once, with the file and line; the others are kept.
func TestHooksThatCannotRunWarn(t *testing.T) {
	d := mustLoad(t, ".claude/agents/x.md",
		"---\nname: x\ndescription: d\nhooks:\n  PostToolUseFailure:\n    - hooks: [{type: command, command: a}]\n  Stop:\n    - hooks: [{type: prompt, prompt: check}, {type: command, command: b, timeout: 5}]\n---\nbody\n")
	if len(d.Warnings) != 2 || !strings.Contains(strings.Join(d.Warnings, "\n"), `x.md:5: hooks: PostToolUseFailure: cadre does not fire this event`) ||
		!strings.Contains(strings.Join(d.Warnings, "\n"), `Stop[0].hooks[0]: hooks of type "prompt" do not run in cadre`) {
		t.Errorf("warnings %q", d.Warnings)
	}
	if d.Hooks == nil {
		t.Error("the hooks that can run were dropped")
	}
}
