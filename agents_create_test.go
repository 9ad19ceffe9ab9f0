package cadre_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
)

func TestCreateAgentWritesALoadableFileAndLoadsIt(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	ctx := context.Background()
	a := cadre.NewAgent{Name: "Reviewer", Description: "Reviews code: style, bugs and tests.", Tools: []string{"Read", "Grep"}, Model: "haiku", Prompt: "You review code.\n\nBe brief."}
	e, err := rt.CreateAgent(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.dir, ".cadre", "agents", "reviewer.md")
	if e.Path != path || e.Source != cadre.AgentSourceProject || !e.Active || e.Err != nil || len(e.Warnings) != 0 {
		t.Errorf("entry %+v", e)
	}
	got, ok := rt.Agent("reviewer")
	if !ok {
		t.Fatal("the new agent is not in effect")
	}
	if got.Description != a.Description || !slices.Equal(got.Tools, a.Tools) || got.Model != "haiku" || got.Prompt != "You review code.\n\nBe brief." {
		t.Errorf("definition %+v", got)
	}
	// Another runtime reads the file the same way.
	again := f.open(t, cadre.Options{})
	if d, ok := again.Agent("reviewer"); !ok || d.Description != a.Description || !slices.Equal(d.Tools, a.Tools) {
		t.Errorf("reloaded: %+v, %v", d, ok)
	}

	for _, tc := range []struct {
		name string
		a    cadre.NewAgent
		want string
	}{
		{"exists", cadre.NewAgent{Name: "reviewer", Description: "Again.", Prompt: "x"}, "exists already"},
		{"traversal", cadre.NewAgent{Name: "../evil", Description: "d", Prompt: "x"}, "path traversal"},
		{"empty name", cadre.NewAgent{Description: "d", Prompt: "x"}, "agent name is empty"},
		{"bad character", cadre.NewAgent{Name: "a b", Description: "d", Prompt: "x"}, "bad character"},
		{"no description", cadre.NewAgent{Name: "quiet", Description: "  ", Prompt: "x"}, "description is required"},
		{"comma in a tool", cadre.NewAgent{Name: "tooly", Description: "d", Tools: []string{"Read,Bash"}, Prompt: "x"}, "is not a tool name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.CreateAgent(ctx, tc.a)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CreateAgent = %v, want %q", err, tc.want)
			}
		})
	}
	// Nothing was written for the refused ones.
	files, _ := os.ReadDir(filepath.Join(f.dir, ".cadre", "agents"))
	if len(files) != 1 {
		t.Errorf("files %v, want only reviewer.md", files)
	}
}
