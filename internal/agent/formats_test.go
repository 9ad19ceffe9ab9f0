package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// loadOne loads a project holding the single file name and returns its entry.
func loadOne(t *testing.T, name, content string) (Entry, *Registry, string) {
	t.Helper()
	root := tree(t, map[string]string{name: content})
	r := Load(LoadOptions{Cwd: root})
	return entryAt(t, r, filepath.Join(root, filepath.FromSlash(name))), r, root
}

func mustLoad(t *testing.T, name, content string) Definition {
	t.Helper()
	e, _, _ := loadOne(t, name, content)
	if e.Err != nil {
		t.Fatalf("%s: %v", name, e.Err)
	}
	return e.Definition
}

// ignoreProvenance compares what a definition says, not where it lives.
var ignoreProvenance = cmpopts.IgnoreFields(Definition{}, "Path", "Prompt")

func TestClaudeCodeFileUnchanged(t *testing.T) {
	src := fixture(t, "claude/code-reviewer.md")
	d := mustLoad(t, ".claude/agents/code-reviewer.md", src)
	want := Definition{
		Name:        "code-reviewer",
		Description: "Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.",
		Tools:       []string{"Read", "Grep", "Glob", "Bash"},
		Model:       "sonnet",
		Format:      FormatClaude,
		Source:      SourceProject,
		Line:        1,
	}
	if diff := cmp.Diff(want, d, ignoreProvenance); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	body := src[strings.Index(src, "You are a senior"):]
	if d.Prompt != strings.TrimSpace(body) {
		t.Errorf("prompt = %q, want the trimmed body", d.Prompt)
	}
}

func TestClaudeCodeGeneratedFile(t *testing.T) {
	// As Claude Code's /agents writes them: a one-line description with
	// ": " and literal \n, which is not valid YAML, plus every field.
	d := mustLoad(t, ".claude/agents/test-runner.md", fixture(t, "claude/test-runner.md"))
	want := Definition{
		Name: "test-runner",
		Description: "Use this agent when you need to run the test suite and fix failures. Examples: <example>Context: The user has just changed a function. user: \"I updated the parser\" assistant: \"Let me use the test-runner agent to run the tests\"</example>\n\n" +
			"<example>Context: CI is red. user: \"CI fails\" assistant: \"I'll launch the test-runner agent\"</example>",
		Prompt:         "You are a test automation expert. Run the tests, find the root cause of each failure and fix it while preserving the test's intent.",
		Tools:          []string{"Bash", "Read", "Edit"},
		Model:          "inherit",
		Color:          "green",
		PermissionMode: "acceptEdits",
		MaxTurns:       20,
		Memory:         "project",
		Skills:         []string{"go-testing", "table-tests"},
		Effort:         "high",
		Hooks: map[string]any{"PostToolUse": []any{map[string]any{
			"matcher": "Edit",
			"hooks":   []any{map[string]any{"type": "command", "command": "./scripts/fmt.sh"}},
		}}},
		MCPServers: []any{"github", map[string]any{"playwright": map[string]any{
			"command": "npx", "args": []any{"@playwright/mcp@latest"},
		}}},
		Format: FormatClaude,
		Source: SourceProject,
		Line:   1,
	}
	if diff := cmp.Diff(want, d, cmpopts.IgnoreFields(Definition{}, "Path", "Warnings")); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "test-runner.md:3: frontmatter is not valid YAML") {
		t.Errorf("warnings = %q, want one saying line 3 was read leniently", d.Warnings)
	}
}

func TestOpenCodeFileUnchanged(t *testing.T) {
	d := mustLoad(t, ".opencode/agent/review.md", fixture(t, "opencode/review.md"))
	want := Definition{
		Name:            "review",
		Description:     "Reviews code for quality and best practices",
		Mode:            ModeSubagent,
		Model:           "anthropic/claude-sonnet-4-20250514",
		Temperature:     ptr(0.1),
		DisallowedTools: []string{"Write", "Edit", "Bash"},
		Format:          FormatOpenCode,
		Source:          SourceProject,
		Line:            1,
	}
	if diff := cmp.Diff(want, d, ignoreProvenance); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(d.Prompt, "You are in code review mode.") {
		t.Errorf("prompt = %q", d.Prompt)
	}
}

func TestOpenCodePermissionFile(t *testing.T) {
	d := mustLoad(t, ".opencode/agents/careful.md", fixture(t, "opencode/careful.md"))
	want := Definition{
		Name:        "careful",
		Description: "Code review without edits, asks before running commands",
		Prompt:      "Only analyze code and suggest changes.",
		Mode:        ModeSubagent,
		Hidden:      true,
		MaxTurns:    12,
		Color:       "#FF5733",
		Allow:       []string{"Bash(git *)"},
		Ask:         []string{"Bash(git push)", "WebFetch"},
		Deny:        []string{"Edit", "Bash"},
		TaskRules: []TaskRule{
			{"*", "deny"}, {"review-*", "allow"}, {"review-secret", "ask"},
		},
		Format: FormatOpenCode,
		Source: SourceProject,
		Line:   1,
	}
	if diff := cmp.Diff(want, d, cmpopts.IgnoreFields(Definition{}, "Path")); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
}

func TestHarnessFile(t *testing.T) {
	d := mustLoad(t, "workspace/subagents/reviewer.md", fixture(t, "harness/reviewer.md"))
	want := Definition{
		Name:        "reviewer",
		Description: "代码评审专家",
		Model:       "openai:gpt-4o-mini",
		MaxTurns:    8,
		Tools:       []string{"read_file", "grep_files"},
		Workspace:   &Workspace{Mode: WorkspaceIsolated, Path: "./defs/reviewer"},
		Format:      FormatHarness,
		Source:      SourceProject,
		Line:        1,
	}
	if diff := cmp.Diff(want, d, ignoreProvenance); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
}

func TestHarnessDefaultsAndFields(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                Definition
		warnings            []string // substrings, in order
	}{{
		name: "defaults", file: "helper.md",
		content: "---\ndescription: helps\n---\nYou help.\n",
		want: Definition{Name: "helper", Description: "helps", Prompt: "You help.", MaxTurns: 10,
			Workspace: &Workspace{Mode: WorkspaceIsolated}},
	}, {
		name: "name ignored, maxTurns alias, shared", file: "helper.md",
		content: "---\nname: other\ndescription: helps\nmaxTurns: 0\nworkspace:\n  mode: shared\ntimeout: 30\n---\nYou help.\n",
		want: Definition{Name: "helper", Description: "helps", Prompt: "You help.",
			Workspace: &Workspace{Mode: WorkspaceShared}},
		warnings: []string{`helper.md:2: name: ignored: the file name ("helper") is the agent name`, `helper.md:7: unknown field "timeout" ignored`},
	}, {
		name: "remote", file: "far.md",
		content: "---\ndescription: remote researcher\nurl: http://agent-task-server:8080\nheaders:\n  Authorization: Bearer xxx\n---\n",
		want: Definition{Name: "far", Description: "remote researcher", MaxTurns: 10,
			URL: "http://agent-task-server:8080", Headers: map[string]string{"Authorization": "Bearer xxx"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustLoad(t, "workspace/subagents/"+tt.file, tt.content)
			tt.want.Format, tt.want.Source, tt.want.Line = FormatHarness, SourceProject, 1
			if diff := cmp.Diff(tt.want, d, cmpopts.IgnoreFields(Definition{}, "Path", "Warnings")); diff != "" {
				t.Errorf("definition (-want +got):\n%s", diff)
			}
			checkWarnings(t, d.Warnings, tt.warnings)
		})
	}
}

func checkWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("warnings = %q, want %d: %q", got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

func TestHarnessOnlyFirstLevel(t *testing.T) {
	root := tree(t, map[string]string{
		"workspace/subagents/top.md":        "---\ndescription: top\n---\n",
		"workspace/subagents/deep/inner.md": "---\ndescription: inner\n---\n",
		"workspace/subagents/notes.txt":     "not an agent",
		"workspace/subagents/.draft.md":     "---\n",
	})
	r := Load(LoadOptions{Cwd: root})
	var names []string
	for _, d := range r.All() {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"general-purpose", "top"}, names); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	if len(r.Problems()) != 0 {
		t.Errorf("problems: %v", r.Problems())
	}
}

func TestListSyntax(t *testing.T) {
	tests := []struct {
		name, value string
		want        []string
	}{
		{"comma string", "Read, Grep,Glob", []string{"Read", "Grep", "Glob"}},
		{"parentheses keep commas", "Bash(git diff, git log), Read", []string{"Bash(git diff, git log)", "Read"}},
		{"yaml list", "[Read, \"Bash(npm run test:*)\"]", []string{"Read", "Bash(npm run test:*)"}},
		{"block list", "\n  - Read\n  - Edit", []string{"Read", "Edit"}},
		{"star", "\"*\"", []string{"*"}},
		{"empty string means none", "\"\"", []string{}},
		{"empty list means none", "[]", []string{}},
		{"nothing means all", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustLoad(t, ".cadre/agents/x.md", "---\nname: x\ndescription: d\ntools: "+tt.value+"\ndisallowedTools: "+tt.value+"\n---\n")
			if diff := cmp.Diff(tt.want, d.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if (tt.want == nil) != (d.Tools == nil) {
				t.Errorf("tools = %#v, want %#v", d.Tools, tt.want)
			}
			if len(tt.want) > 0 {
				if diff := cmp.Diff(tt.want, d.DisallowedTools); diff != "" {
					t.Errorf("disallowedTools (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestOpenCodeTools(t *testing.T) {
	tests := []struct {
		name, tools     string
		allow, disallow []string
		wantErr         string
	}{
		{name: "false entries disallowed, names mapped", tools: "{write: false, edit: false, patch: false, list: false, task: false, webfetch: false, todowrite: false, todoread: false, read: true}",
			disallow: []string{"Write", "Edit", "LS", "Agent", "WebFetch", "TodoWrite", "TodoRead"}},
		{name: "unknown and wildcards kept", tools: `{"mymcp_*": false, custom_tool: false, grep: false, glob: false}`,
			disallow: []string{"mymcp_*", "custom_tool", "Grep", "Glob"}},
		{name: "star false makes an allowlist", tools: `{"*": false, read: true, grep: true, bash: false}`,
			allow: []string{"Read", "Grep"}, disallow: []string{"Bash"}},
		{name: "star false alone allows none", tools: `{"*": false}`, allow: []string{}},
		{name: "list still works", tools: "[read_file]", allow: []string{"read_file"}},
		{name: "non-bool", tools: "{write: no}", wantErr: `x.md:4: tools.write: want true or false, got "no"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := loadOne(t, ".opencode/agent/x.md", "---\ndescription: d\ntools:\n  "+tt.tools+"\n---\n")
			if tt.wantErr != "" {
				if e.Err == nil || !strings.Contains(e.Err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", e.Err, tt.wantErr)
				}
				return
			}
			if e.Err != nil {
				t.Fatal(e.Err)
			}
			if diff := cmp.Diff(tt.allow, e.Definition.Tools); diff != "" || (tt.allow == nil) != (e.Definition.Tools == nil) {
				t.Errorf("tools = %#v, want %#v", e.Definition.Tools, tt.allow)
			}
			if diff := cmp.Diff(tt.disallow, e.Definition.DisallowedTools, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("disallowed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenCodePermission(t *testing.T) {
	tests := []struct {
		name, perm       string
		allow, ask, deny []string
		task             []TaskRule
		warnings         []string
		wantErr          string
	}{
		{name: "plain actions", perm: "{edit: deny, bash: ask, webfetch: allow}",
			allow: []string{"WebFetch"}, ask: []string{"Bash"}, deny: []string{"Edit"}},
		{name: "bash map keeps order", perm: `{bash: {"git push": ask, "git *": allow, "*": deny}}`,
			allow: []string{"Bash(git *)"}, ask: []string{"Bash(git push)"}, deny: []string{"Bash"}},
		{name: "order within one list", perm: `{bash: {"rm *": deny, "sudo *": deny, "curl *": deny}}`,
			deny: []string{"Bash(rm *)", "Bash(sudo *)", "Bash(curl *)"}},
		{name: "read family", perm: `{read: {"*.env": deny}, list: allow, grep: allow, glob: allow}`,
			allow: []string{"LS", "Grep", "Glob"}, deny: []string{"Read(*.env)"}},
		{name: "task map ordered", perm: `{task: {"*": deny, "review-*": allow, "orchestrator-*": ask}}`,
			task: []TaskRule{{"*", "deny"}, {"review-*", "allow"}, {"orchestrator-*", "ask"}}},
		{name: "task action", perm: `{task: deny}`, task: []TaskRule{{"*", "deny"}}},
		{name: "narrower rule after a stricter star warns", perm: `{bash: {"*": ask, "git status": allow}}`,
			allow: []string{"Bash(git status)"}, ask: []string{"Bash"},
			warnings: []string{`permission.bash: "git status": allow comes after "*": ask`}},
		{name: "unsupported keys warn", perm: `{doom_loop: ask, external_directory: deny, edit: allow}`,
			allow:    []string{"Edit"},
			warnings: []string{"x.md:4: permission.doom_loop: not supported by cadre; ignored", "permission.external_directory: not supported"}},
		{name: "one action for all warns", perm: `allow`, warnings: []string{"permission: one action for every tool"}},
		{name: "bad action", perm: `{bash: {"git *": maybe}}`, wantErr: `x.md:4: permission.bash.git *: action "maybe" is not valid: want one of allow, ask, deny`},
		{name: "bad task action", perm: `{task: {"*": yes}}`, wantErr: `permission.task.*: action "yes" is not valid`},
		{name: "list is wrong", perm: `[edit]`, wantErr: `permission: want a mapping of tool to allow, ask or deny, got a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := loadOne(t, ".opencode/agent/x.md", "---\ndescription: d\npermission:\n  "+tt.perm+"\n---\n")
			if tt.wantErr != "" {
				if e.Err == nil || !strings.Contains(e.Err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", e.Err, tt.wantErr)
				}
				return
			}
			if e.Err != nil {
				t.Fatal(e.Err)
			}
			d := e.Definition
			got := []any{d.Allow, d.Ask, d.Deny, d.TaskRules}
			want := []any{tt.allow, tt.ask, tt.deny, tt.task}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("allow, ask, deny, task (-want +got):\n%s", diff)
			}
			checkWarnings(t, d.Warnings, tt.warnings)
		})
	}
}

func TestOpenCodeSpecifics(t *testing.T) {
	t.Run("disable skips silently", func(t *testing.T) {
		root := tree(t, map[string]string{
			".opencode/agent/off.md": "---\ndescription: d\ndisable: true\n---\n",
			".opencode/agent/on.md":  "---\ndescription: d\ndisable: false\n---\n",
		})
		r := Load(LoadOptions{Cwd: root})
		if _, ok := r.Get("off"); ok {
			t.Error("disabled agent loaded")
		}
		if _, ok := r.Get("on"); !ok {
			t.Error("disable: false agent missing")
		}
		if len(r.Entries()) != 2 || len(r.Problems()) != 0 {
			t.Errorf("entries %d (want general-purpose and on), problems %v", len(r.Entries()), r.Problems())
		}
	})
	t.Run("name field ignored with a warning", func(t *testing.T) {
		d := mustLoad(t, ".opencode/agent/docs.md", "---\nname: writer\ndescription: d\n---\nbody\n")
		if d.Name != "docs" {
			t.Errorf("name = %q, want docs", d.Name)
		}
		checkWarnings(t, d.Warnings, []string{`docs.md:2: name: ignored: the file name ("docs") is the agent name`})
	})
	t.Run("prompt from a file", func(t *testing.T) {
		root := tree(t, map[string]string{
			".opencode/agent/p.md":          "---\ndescription: d\nprompt: \"{file:./prompts/p.txt}\"\n---\n",
			".opencode/agent/prompts/p.txt": "  Prompt from a file.\n",
		})
		r := Load(LoadOptions{Cwd: root})
		d, ok := r.Get("p")
		if !ok || d.Prompt != "Prompt from a file." {
			t.Errorf("Get(p) = %q, %v (problems %v)", d.Prompt, ok, r.Problems())
		}
	})
	t.Run("missing prompt file", func(t *testing.T) {
		e, _, _ := loadOne(t, ".opencode/agent/p.md", "---\ndescription: d\nprompt: \"{file:nope.txt}\"\n---\n")
		if e.Err == nil || !strings.Contains(e.Err.Error(), "p.md:3: prompt: cannot read") {
			t.Errorf("err = %v", e.Err)
		}
	})
	t.Run("plain prompt field", func(t *testing.T) {
		d := mustLoad(t, ".opencode/agent/p.md", "---\ndescription: d\nprompt: Be brief.\n---\n")
		if d.Prompt != "Be brief." {
			t.Errorf("prompt = %q", d.Prompt)
		}
	})
	t.Run("body wins over prompt", func(t *testing.T) {
		d := mustLoad(t, ".opencode/agent/p.md", "---\ndescription: d\nprompt: Be brief.\n---\nThe body.\n")
		if d.Prompt != "The body." {
			t.Errorf("prompt = %q", d.Prompt)
		}
		checkWarnings(t, d.Warnings, []string{"p.md:3: prompt: ignored: the file's body is the prompt"})
	})
	t.Run("maxSteps", func(t *testing.T) {
		d := mustLoad(t, ".opencode/agent/p.md", "---\ndescription: d\nmaxSteps: 7\n---\n")
		if d.MaxTurns != 7 {
			t.Errorf("MaxTurns = %d", d.MaxTurns)
		}
	})
	t.Run("bad file name", func(t *testing.T) {
		e, _, _ := loadOne(t, ".opencode/agent/my agent.md", "---\ndescription: d\n---\n")
		if e.Err == nil || !strings.Contains(e.Err.Error(), `my agent.md: file name: agent name "my agent" has a bad character ' '`) {
			t.Errorf("err = %v", e.Err)
		}
	})
}

func TestSettingsAgents(t *testing.T) {
	settings := `{
		"reviewer": {"description": "reviews", "prompt": "Review it.", "tools": ["Read", "Grep"],
		             "permissionMode": "plan", "maxTurns": 5, "temperature": 0.2,
		             "permission": {"task": {"*": "deny", "a-*": "allow"}}},
		"lister": {"description": "lists", "prompt": "List.", "tools": "LS, Glob", "name": "other", "colour": "red"}
	}`
	r := Load(LoadOptions{Settings: []byte(settings), SettingsFile: "/p/.cadre/settings.json"})
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	got, _ := r.Get("reviewer")
	want := Definition{
		Name: "reviewer", Description: "reviews", Prompt: "Review it.", Tools: []string{"Read", "Grep"},
		PermissionMode: "plan", MaxTurns: 5, Temperature: ptr(0.2),
		TaskRules: []TaskRule{{"*", "deny"}, {"a-*", "allow"}},
		Format:    FormatJSON, Source: SourceSettings, Path: "/p/.cadre/settings.json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reviewer (-want +got):\n%s", diff)
	}
	lister, _ := r.Get("lister")
	if diff := cmp.Diff([]string{"LS", "Glob"}, lister.Tools); diff != "" {
		t.Errorf("lister tools (-want +got):\n%s", diff)
	}
	checkWarnings(t, lister.Warnings, []string{
		`/p/.cadre/settings.json: agents.lister: unknown field "colour" ignored (did you mean "color"?)`,
		`/p/.cadre/settings.json: agents.lister.name: ignored: the key ("lister") is the agent name`,
	})
	// Loaded sorted by name, whatever the key order.
	var order []string
	for _, e := range r.Entries() {
		order = append(order, e.Definition.Name)
	}
	if diff := cmp.Diff([]string{"general-purpose", "lister", "reviewer"}, order); diff != "" {
		t.Errorf("entry order (-want +got):\n%s", diff)
	}
}

func TestSettingsErrors(t *testing.T) {
	tests := []struct {
		name, settings string
		want           []string // problem texts
	}{
		{"tools wrong type", `{"reviewer": {"description": "d", "tools": {"Read": true}}}`,
			[]string{"s.json: agents.reviewer.tools: want a list of strings or a comma-separated string, got a mapping"}},
		{"tools number", `{"reviewer": {"description": "d", "tools": 3}}`,
			[]string{"s.json: agents.reviewer.tools: want a list of strings or a comma-separated string, got the number 3"}},
		{"tools element", `{"reviewer": {"description": "d", "tools": ["Read", 3]}}`,
			[]string{"s.json: agents.reviewer.tools[1]: want a list of strings or a comma-separated string, got the number 3"}},
		{"missing description", `{"reviewer": {"prompt": "p"}}`,
			[]string{"s.json: agents.reviewer.description: is required"}},
		{"bad key", `{"../evil": {"description": "d"}}`,
			[]string{`s.json: agents.../evil: agent name "../evil" is refused`}},
		{"entry not an object", `{"reviewer": "Read"}`,
			[]string{`s.json: agents.reviewer: want an object with description, prompt, tools and other fields, got "Read"`}},
		{"not an object", `["reviewer"]`,
			[]string{"s.json: agents: want an object mapping agent names to definitions, got a list"}},
		{"not JSON", `{"reviewer": `, []string{"s.json: agents: not valid JSON"}},
		{"bad mode and maxTurns", `{"r": {"description": "d", "permissionMode": "yolo", "maxTurns": -1}}`,
			[]string{`s.json: agents.r.permissionMode: "yolo" is not valid: want one of plan, default, acceptEdits, bypassPermissions`,
				"s.json: agents.r.maxTurns: must not be negative, got -1"}},
		{"maxTurns string", `{"r": {"description": "d", "maxTurns": "8"}}`,
			[]string{`s.json: agents.r.maxTurns: want a whole number, got "8"`}},
		{"url with prompt", `{"r": {"description": "d", "url": "https://x.example", "prompt": "p"}}`,
			[]string{"s.json: agents.r.url: cannot be combined with a prompt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Load(LoadOptions{Settings: []byte(tt.settings), SettingsFile: "s.json"})
			probs := r.Problems()
			if len(probs) != len(tt.want) {
				t.Fatalf("problems = %v, want %q", probs, tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(probs[i].Error(), w) {
					t.Errorf("problem %d = %q, want prefix %q", i, probs[i].Error(), w)
				}
			}
		})
	}
}

func TestAllFields(t *testing.T) {
	d := mustLoad(t, ".cadre/agents/all.md", `---
name: all
description: every field
tools: &t [Read, Grep]
disallowedTools: *t
model: openai:gpt-4o-mini
effort: max
permissionMode: PLAN
background: true
isolation: worktree
maxTurns: 0x10
memory: local
mcpServers: github, jira
requiredMcpServers: [github]
skills: [pdf]
initialPrompt: Start by reading README.md.
color: purple
hidden: true
mode: primary
temperature: 1
workspace: ./defs/all
permission:
  edit: ask
---
Body.
`)
	want := Definition{
		Name: "all", Description: "every field",
		Tools: []string{"Read", "Grep"}, DisallowedTools: []string{"Read", "Grep"},
		Model: "openai:gpt-4o-mini", Effort: "max", PermissionMode: "plan", Background: true,
		Isolation: IsolationWorktree, MaxTurns: 16, Memory: "local",
		MCPServers: []any{"github", "jira"}, RequiredMCPServers: []string{"github"}, Skills: []string{"pdf"},
		InitialPrompt: "Start by reading README.md.", Color: "purple", Hidden: true, Mode: ModePrimary,
		Temperature: ptr(1.0), Workspace: &Workspace{Mode: WorkspaceShared, Path: "./defs/all"},
		Ask:    []string{"Edit"},
		Format: FormatClaude, Source: SourceProject, Line: 1,
	}
	if diff := cmp.Diff(want, d, cmpopts.IgnoreFields(Definition{}, "Path", "Warnings")); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	// A workspace path with a body: the body is ignored, with a warning.
	checkWarnings(t, d.Warnings, []string{"all.md:21: workspace: body ignored"})
}
