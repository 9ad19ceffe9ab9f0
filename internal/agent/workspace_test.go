package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolveWorkspaceTable(t *testing.T) {
	main := tree(t, map[string]string{
		"defs/reviewer/AGENTS.md": "\nYou review code.\n",
		"defs/empty/README.md":    "no AGENTS.md here",
	})
	abs := filepath.Join(main, "defs/reviewer")
	tests := []struct {
		name string
		def  Definition
		want Resolved
	}{
		{"built-in general-purpose", GeneralPurpose(),
			Resolved{Cwd: main, PromptBase: GeneralPurpose().Prompt}},
		{"path + isolated", Definition{Name: "r", Prompt: "ignored", Workspace: &Workspace{Mode: WorkspaceIsolated, Path: "defs/reviewer"}},
			Resolved{Cwd: abs, PromptBase: "You review code."}},
		{"absolute path + isolated", Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceIsolated, Path: abs}},
			Resolved{Cwd: abs, PromptBase: "You review code."}},
		{"path + isolated, no AGENTS.md", Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceIsolated, Path: "./defs/empty"}},
			Resolved{Cwd: filepath.Join(main, "defs/empty"), PromptBase: ""}},
		{"path + shared", Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceShared, Path: "./defs/reviewer/"}},
			Resolved{Cwd: main, PromptBase: "You review code."}},
		{"path + shared, no AGENTS.md", Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceShared, Path: "defs/empty"}},
			Resolved{Cwd: main, PromptBase: ""}},
		{"no path + isolated", Definition{Name: "Helper", Prompt: "Body.", Workspace: &Workspace{Mode: WorkspaceIsolated}},
			Resolved{Cwd: filepath.Join(main, "agents/helper/workspace"), PromptBase: "Body.", Created: true}},
		{"no path + shared", Definition{Name: "h", Prompt: "Body.", Workspace: &Workspace{Mode: WorkspaceShared}},
			Resolved{Cwd: main, PromptBase: "Body."}},
		{"nil workspace: shared for non-harness formats", Definition{Name: "h", Prompt: "Body.", Format: FormatClaude},
			Resolved{Cwd: main, PromptBase: "Body."}},
		{"nil workspace: isolated for harness", Definition{Name: "hh", Prompt: "Body.", Format: FormatHarness},
			Resolved{Cwd: filepath.Join(main, "agents/hh/workspace"), PromptBase: "Body.", Created: true}},
		{"remote", Definition{Name: "far", URL: "https://x.example", Format: FormatHarness},
			Resolved{Cwd: main}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.def.Resolve(main)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
			if info, err := os.Stat(got.Cwd); err != nil || !info.IsDir() {
				t.Errorf("runtime workspace %s: %v", got.Cwd, err)
			}
		})
	}
	// The isolated workspace exists now: a second run does not create it.
	got, err := Definition{Name: "helper", Workspace: &Workspace{Mode: WorkspaceIsolated}}.Resolve(main)
	if err != nil || got.Created {
		t.Errorf("second Resolve: %+v, %v; want Created false", got, err)
	}
}

func TestResolveFromLoadedFiles(t *testing.T) {
	main := tree(t, map[string]string{
		"workspace/subagents/helper.md": "---\ndescription: d\n---\nYou help.\n",
		".claude/agents/rev.md":         "---\nname: rev\ndescription: d\n---\nYou review.\n",
	})
	r := Load(LoadOptions{Cwd: main})
	h, _ := r.Get("helper")
	got, err := h.Resolve(main)
	want := Resolved{Cwd: filepath.Join(main, "agents/helper/workspace"), PromptBase: "You help.", Created: true}
	if err != nil || got != want {
		t.Errorf("harness file: %+v, %v; want %+v", got, err, want)
	}
	rev, _ := r.Get("rev")
	got, err = rev.Resolve(main)
	if want := (Resolved{Cwd: main, PromptBase: "You review."}); err != nil || got != want {
		t.Errorf("Claude file: %+v, %v; want %+v", got, err, want)
	}
}

func TestResolveErrors(t *testing.T) {
	main := tree(t, map[string]string{"file": "x"})
	tests := []struct {
		name string
		def  Definition
		want string
	}{
		{"missing path", Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceShared, Path: "nope"}}, "agent r: workspace.path: stat " + filepath.Join(main, "nope")},
		{"path is a file", Definition{Name: "r", Workspace: &Workspace{Path: "file"}}, "is not a directory"},
		{"traversal in the name", Definition{Name: "../../etc", Workspace: &Workspace{Mode: WorkspaceIsolated}}, "path traversal"},
		{"bad mode", Definition{Name: "r", Workspace: &Workspace{Mode: "private"}}, `workspace mode "private" is not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.def.Resolve(main)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(main, "agents")); !os.IsNotExist(err) {
		t.Errorf("a refused name created a directory: %v", err)
	}
}

func TestResolveHomePath(t *testing.T) {
	home := tree(t, map[string]string{"defs/r/AGENTS.md": "From home."})
	t.Setenv("HOME", home)
	got, err := Definition{Name: "r", Workspace: &Workspace{Mode: WorkspaceIsolated, Path: "~/defs/r"}}.Resolve(t.TempDir())
	want := Resolved{Cwd: filepath.Join(home, "defs/r"), PromptBase: "From home."}
	if err != nil || got != want {
		t.Errorf("Resolve = %+v, %v; want %+v", got, err, want)
	}
}
