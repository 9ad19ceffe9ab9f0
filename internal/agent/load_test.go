package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func md(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nPrompt of " + desc + ".\n"
}

func mdNoName(desc string) string {
	return "---\ndescription: " + desc + "\n---\nPrompt of " + desc + ".\n"
}

func TestPrecedence(t *testing.T) {
	root := tree(t, map[string]string{
		"home/agents/reviewer.md":                md("reviewer", "user"),
		"home/agents/general-purpose.md":         md("general-purpose", "user gp"),
		"home/agents/solo.md":                    md("solo", "user solo"),
		"proj/.claude/agents/reviewer.md":        md("reviewer", "claude"),
		"proj/.opencode/agent/reviewer.md":       mdNoName("opencode agent"),
		"proj/.opencode/agents/reviewer.md":      mdNoName("opencode agents"),
		"proj/workspace/subagents/reviewer.md":   mdNoName("harness"),
		"proj/.cadre/agents/reviewer.md":         md("Reviewer", "cadre"),
		"proj/.cadre/agents/only-project.md":     md("only-project", "cadre only"),
		"proj/.claude/agents/settings-winner.md": md("settings-winner", "claude"),
	})
	home, proj := filepath.Join(root, "home/agents"), filepath.Join(root, "proj")
	r := Load(LoadOptions{
		Cwd:          proj,
		UserDir:      home,
		Settings:     []byte(`{"reviewer": {"description": "settings", "prompt": "p"}, "settings-winner": {"description": "settings"}}`),
		SettingsFile: "settings.json",
		Declared:     []Definition{{Name: "reviewer", Description: "declared"}},
		Factories: []func() ([]Definition, error){
			func() ([]Definition, error) { return []Definition{{Name: "REVIEWER", Description: "factory"}}, nil },
		},
	})
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}

	type row struct {
		Name, Description, Source string
		Format                    Format
		Active                    bool
		ShadowedBy                string
	}
	var got []row
	for _, e := range r.Entries() {
		d := e.Definition
		got = append(got, row{d.Name, d.Description, d.Source, d.Format, e.Active, strings.TrimPrefix(e.ShadowedBy, root+"/")})
	}
	const winner = "SDK"
	want := []row{
		{"general-purpose", GeneralPurpose().Description, SourceBuiltin, FormatBuiltin, false, "home/agents/general-purpose.md"},
		{"general-purpose", "user gp", SourceUser, FormatClaude, true, ""},
		{"reviewer", "user", SourceUser, FormatClaude, false, winner},
		{"solo", "user solo", SourceUser, FormatClaude, true, ""},
		{"reviewer", "claude", SourceProject, FormatClaude, false, winner},
		{"settings-winner", "claude", SourceProject, FormatClaude, false, "settings.json (agents.settings-winner)"},
		{"reviewer", "opencode agent", SourceProject, FormatOpenCode, false, winner},
		{"reviewer", "opencode agents", SourceProject, FormatOpenCode, false, winner},
		{"reviewer", "harness", SourceProject, FormatHarness, false, winner},
		{"only-project", "cadre only", SourceProject, FormatClaude, true, ""},
		{"reviewer", "cadre", SourceProject, FormatClaude, false, winner},
		{"reviewer", "settings", SourceSettings, FormatJSON, false, winner},
		{"settings-winner", "settings", SourceSettings, FormatJSON, true, ""},
		{"reviewer", "declared", SourceSDK, FormatSDK, false, winner},
		{"reviewer", "factory", SourceSDK, FormatSDK, true, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	d, ok := r.Get("Reviewer")
	if !ok || d.Description != "factory" {
		t.Errorf("Get(Reviewer) = %q, %v; want the factory's", d.Description, ok)
	}
	var names []string
	for _, d := range r.All() {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"general-purpose", "only-project", "reviewer", "settings-winner", "solo"}, names); diff != "" {
		t.Errorf("All names (-want +got):\n%s", diff)
	}
}

func TestProjectDirOrder(t *testing.T) {
	// Without settings or SDK, cadre's own directory wins among project dirs.
	root := tree(t, map[string]string{
		".claude/agents/r.md":      md("r", "claude"),
		"workspace/subagents/r.md": mdNoName("harness"),
		".cadre/agents/r.md":       md("r", "cadre"),
	})
	d, _ := Load(LoadOptions{Cwd: root}).Get("r")
	if d.Description != "cadre" {
		t.Errorf("r = %q, want cadre's", d.Description)
	}
	root = tree(t, map[string]string{
		".claude/agents/r.md":      md("r", "claude"),
		"workspace/subagents/r.md": mdNoName("harness"),
	})
	d, _ = Load(LoadOptions{Cwd: root}).Get("r")
	if d.Description != "harness" {
		t.Errorf("r = %q, want the harness file's", d.Description)
	}
}

func TestBrokenOverrideKeepsEarlierDefinition(t *testing.T) {
	root := tree(t, map[string]string{
		".claude/agents/reviewer.md": md("reviewer", "working"),
		".cadre/agents/reviewer.md":  "---\nname: reviewer\ndescription: broken\nmaxTurns: -1\n---\n",
	})
	r := Load(LoadOptions{
		Cwd:      root,
		Settings: []byte(`{"reviewer": {"description": "also broken", "tools": 1}}`),
		Declared: []Definition{{Name: "reviewer", Description: "bad", PermissionMode: "bubble"}},
	})
	d, ok := r.Get("reviewer")
	if !ok || d.Description != "working" {
		t.Fatalf("Get(reviewer) = %q, %v; want the working definition", d.Description, ok)
	}
	entries := r.Entries()[1:]
	if len(entries) != 4 || !entries[0].Active || entries[0].ShadowedBy != "" {
		t.Fatalf("entries = %+v", entries)
	}
	for _, e := range entries[1:] {
		if e.Active || e.Err == nil || e.ShadowedBy != "" {
			t.Errorf("broken entry %q: active %v, err %v, shadowed by %q", e.Definition.Description, e.Active, e.Err, e.ShadowedBy)
		}
	}
	if n := len(r.Problems()); n != 3 {
		t.Errorf("%d problems, want 3: %v", n, r.Problems())
	}
}

func TestSDKDeclarations(t *testing.T) {
	tests := []struct {
		name    string
		def     Definition
		want    Definition
		wantErr []string
	}{
		{name: "plain", def: Definition{Name: "Helper", Description: " helps ", Prompt: "p", PermissionMode: "acceptedits"},
			want: Definition{Name: "helper", Description: "helps", Prompt: "p", PermissionMode: "acceptEdits", Format: FormatSDK, Source: SourceSDK}},
		{name: "harness style gets harness defaults", def: Definition{Name: "h", Description: "d", Format: FormatHarness},
			want: Definition{Name: "h", Description: "d", Format: FormatHarness, Source: SourceSDK, MaxTurns: 10, Workspace: &Workspace{Mode: WorkspaceIsolated}}},
		{name: "shared default", def: Definition{Name: "s", Description: "d", Workspace: &Workspace{Path: "defs/s"}},
			want: Definition{Name: "s", Description: "d", Format: FormatSDK, Source: SourceSDK, Workspace: &Workspace{Mode: WorkspaceShared, Path: "defs/s"}}},
		{name: "remote", def: Definition{Name: "r", Description: "d", URL: "http://agent-task-server:8080", Headers: map[string]string{"A": "b"}},
			want: Definition{Name: "r", Description: "d", URL: "http://agent-task-server:8080", Headers: map[string]string{"A": "b"}, Format: FormatSDK, Source: SourceSDK}},
		{name: "workspace path and prompt", def: Definition{Name: "w", Description: "d", Prompt: "p", Workspace: &Workspace{Path: "defs/w"}},
			wantErr: []string{`SDK declaration 1: agent "w": Workspace.Path cannot be combined with Prompt`}},
		{name: "url and prompt", def: Definition{Name: "u", Description: "d", Prompt: "p", URL: "https://x.example"},
			wantErr: []string{`agent "u": URL cannot be combined with Prompt`}},
		{name: "url and workspace", def: Definition{Name: "u", Description: "d", URL: "https://x.example", Workspace: &Workspace{Path: "p"}},
			wantErr: []string{`agent "u": URL cannot be combined with Workspace.Path`}},
		{name: "relative url", def: Definition{Name: "u", Description: "d", URL: "/agent"},
			wantErr: []string{`URL: "/agent" is not an absolute http or https URL`}},
		{name: "everything wrong", def: Definition{Name: "../x", PermissionMode: "bubble", Isolation: "vm", Memory: "m", Mode: "m", MaxTurns: -1,
			Workspace: &Workspace{Mode: "private"}, Tools: []string{""}, TaskRules: []TaskRule{{"", "maybe"}}},
			wantErr: []string{"Name: agent name \"../x\" is refused", "Description is required", `PermissionMode: "bubble" is reserved`,
				`Isolation: "vm" is not valid`, `Memory: "m" is not valid`, `Mode: "m" is not valid`, `Workspace.Mode: "private" is not valid`,
				"MaxTurns must not be negative", "Tools[0] is empty", "TaskRules[0]: the pattern is empty", `TaskRules[0]: action "maybe" is not valid`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Load(LoadOptions{Declared: []Definition{tt.def}})
			probs := r.Problems()
			if len(probs) != len(tt.wantErr) {
				t.Fatalf("problems = %v, want %q", probs, tt.wantErr)
			}
			for i, w := range tt.wantErr {
				if !strings.Contains(probs[i].Error(), w) {
					t.Errorf("problem %d = %q, want %q", i, probs[i].Error(), w)
				}
			}
			if tt.wantErr != nil {
				return
			}
			got := r.Entries()[1].Definition
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("definition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSDKDeclarationIsCopied(t *testing.T) {
	tools := []string{"Read"}
	r := Load(LoadOptions{Declared: []Definition{{Name: "x", Description: "d", Tools: tools}}})
	tools[0] = "Bash"
	d, _ := r.Get("x")
	d.Tools[0] = "Write"
	if d2, _ := r.Get("x"); d2.Tools[0] != "Read" {
		t.Errorf("tools = %q: the registry shares its slices", d2.Tools)
	}
}

func TestFactories(t *testing.T) {
	r := Load(LoadOptions{Factories: []func() ([]Definition, error){
		func() ([]Definition, error) { return nil, errors.New("no database") },
		func() ([]Definition, error) {
			return []Definition{{Name: "a", Description: "from factory"}, {Name: "b"}}, nil
		},
		func() ([]Definition, error) { panic("boom") },
		nil,
	}})
	want := []string{
		"SDK factory 1: factory failed: no database",
		`SDK factory 2, definition 2: agent "b": Description is required: say when the parent agent should use this agent`,
		"SDK factory 3: factory panicked: boom",
		"SDK factory 4: factory is nil",
	}
	var got []string
	for _, p := range r.Problems() {
		got = append(got, p.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if d, ok := r.Get("a"); !ok || d.Source != SourceSDK {
		t.Errorf("Get(a) = %+v, %v", d, ok)
	}
}

func TestDirectoryProblems(t *testing.T) {
	root := tree(t, map[string]string{
		".claude/agents/big.md": "---\nname: big\ndescription: d\n---\n" + strings.Repeat("x", maxFileSize),
		".claude/agents/ok.md":  md("ok", "fine"),
	})
	if err := os.Mkdir(filepath.Join(root, ".claude/agents/dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file where a directory should be.
	if err := os.WriteFile(filepath.Join(root, "home"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Load(LoadOptions{Cwd: root, UserDir: filepath.Join(root, "home")})
	probs := r.Problems()
	if len(probs) != 2 {
		t.Fatalf("problems = %v, want 2", probs)
	}
	if !strings.Contains(probs[0].Error(), "home: cannot read agents directory") {
		t.Errorf("problem 0 = %q", probs[0].Error())
	}
	if !strings.Contains(probs[1].Error(), "big.md: cannot read agent file: larger than 1 MiB") {
		t.Errorf("problem 1 = %q", probs[1].Error())
	}
	if _, ok := r.Get("ok"); !ok {
		t.Error("ok did not load")
	}
	if runtime.GOOS != "windows" && os.Getuid() != 0 {
		if err := os.Chmod(filepath.Join(root, ".claude/agents/ok.md"), 0); err != nil {
			t.Fatal(err)
		}
		r = Load(LoadOptions{Cwd: root})
		if e := entryAt(t, r, filepath.Join(root, ".claude/agents/ok.md")); e.Err == nil || !strings.Contains(e.Err.Error(), "permission denied") {
			t.Errorf("unreadable file: err = %v", e.Err)
		}
	}
}

func TestMissingSourcesAreFine(t *testing.T) {
	r := Load(LoadOptions{Cwd: t.TempDir(), UserDir: filepath.Join(t.TempDir(), "nope"), Settings: []byte("null")})
	if len(r.Problems()) != 0 || len(r.All()) != 1 || r.All()[0].Name != GeneralPurposeName {
		t.Errorf("problems %v, all %v", r.Problems(), r.All())
	}
}

func TestGeneralPurpose(t *testing.T) {
	d := GeneralPurpose()
	if d.Name != "general-purpose" || d.Format != FormatBuiltin || d.Source != SourceBuiltin {
		t.Errorf("identity = %q %q %q", d.Name, d.Format, d.Source)
	}
	if !strings.HasPrefix(d.Description, "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks.") {
		t.Errorf("description = %q", d.Description)
	}
	if d.Tools != nil || d.DisallowedTools != nil {
		t.Errorf("tools = %v / %v, want all (nil)", d.Tools, d.DisallowedTools)
	}
	if d.Workspace == nil || *d.Workspace != (Workspace{Mode: WorkspaceShared}) {
		t.Errorf("workspace = %+v, want shared", d.Workspace)
	}
	if len(d.Prompt) < 200 || strings.Contains(d.Prompt, "---") || len(d.Warnings) != 0 {
		t.Errorf("prompt %q, warnings %v", d.Prompt, d.Warnings)
	}
	if d.Model != "" || d.PermissionMode != "" || d.MaxTurns != 0 {
		t.Errorf("general-purpose must inherit model, mode and limits: %+v", d)
	}
}

// TestSP1AllowAgentsField: allowAgents reads as a list of agent names or
// "*"; an empty list stays empty (only the agent's own) rather than unset
// (the settings' list), and a path in it is an error naming the entry.
func TestSP1AllowAgentsField(t *testing.T) {
	tests := []struct {
		line    string
		want    []string
		problem string
	}{
		{line: "allowAgents: [reviewer, \"*\"]", want: []string{"reviewer", "*"}},
		{line: "allowAgents: reviewer, tester", want: []string{"reviewer", "tester"}},
		{line: "allowAgents: []", want: []string{}},
		{line: "allowAgents:", want: nil},
		{line: "allowAgents: [../x]", want: []string{"../x"}, problem: "allowAgents[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			file := "---\nname: probe\ndescription: Probes.\n" + tt.line + "\n---\nBody.\n"
			d, problems, _ := parseFile("/p/.claude/agents/probe.md", []byte(file), FormatClaude, SourceProject, "/p")
			if tt.problem == "" && len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if tt.problem != "" {
				if len(problems) == 0 || !strings.Contains(fmt.Sprint(problems), tt.problem) {
					t.Fatalf("problems %v, want one at %s", problems, tt.problem)
				}
				return
			}
			if (d.AllowAgents == nil) != (tt.want == nil) || !slices.Equal(d.AllowAgents, tt.want) {
				t.Errorf("AllowAgents = %#v, want %#v", d.AllowAgents, tt.want)
			}
		})
	}
}
