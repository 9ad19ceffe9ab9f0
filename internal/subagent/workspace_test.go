package subagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/permission"
)

// A child works inside its parent's workspace: a model-given cwd must lie
// there (or in a directory the user added), and the child's workspace
// root stays the parent's, so its cwd cannot widen what it may touch.
func TestChildWorkspace(t *testing.T) {
	root := t.TempDir()
	main, extra, outside := filepath.Join(root, "main"), filepath.Join(root, "extra"), filepath.Join(root, "outside")
	tree := filepath.Join(main, ".git", "cadre-worktrees", "abc")
	for _, d := range []string{filepath.Join(main, "sub"), extra, outside, filepath.Join(tree, "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(main, "link")); err != nil {
		t.Fatal(err)
	}
	s := &Service{cfg: Config{MainCwd: main, Policy: permission.Policy{Workspace: main, Project: main, AdditionalDirs: []string{extra}}}}
	gp := agent.GeneralPurpose()
	isolated := agent.GeneralPurpose()
	isolated.Name, isolated.Workspace = "iso", &agent.Workspace{Mode: agent.WorkspaceIsolated, Path: outside}
	mainCaller := Caller{Cwd: main, Mode: permission.ModeDefault}
	inTree := Caller{Cwd: filepath.Join(tree, "pkg"), Workspace: tree, Mode: permission.ModeAcceptEdits}
	for _, tc := range []struct {
		name      string
		caller    Caller
		def       agent.Definition
		req       SpawnRequest
		cwd, root string // want
		err       string
	}{
		{"no cwd", mainCaller, gp, SpawnRequest{}, main, main, ""},
		{"a subfolder", mainCaller, gp, SpawnRequest{Cwd: "sub"}, filepath.Join(main, "sub"), main, ""},
		{"an added directory", mainCaller, gp, SpawnRequest{Cwd: extra}, extra, main, ""},
		{"the root", mainCaller, gp, SpawnRequest{Cwd: "/"}, "", "", "outside the workspace"},
		{"dot-dot", mainCaller, gp, SpawnRequest{Cwd: "sub/../.."}, "", "", "outside the workspace"},
		{"a link out", mainCaller, gp, SpawnRequest{Cwd: "link"}, "", "", "outside the workspace"},
		{"not a directory", mainCaller, gp, SpawnRequest{Cwd: "nope"}, "", "", "not a directory"},
		{"a definition workspace outside", mainCaller, isolated, SpawnRequest{}, "", "", "its workspace " + outside + " is outside the workspace"},
		{"a worktree child's child stays in the worktree", inTree, gp, SpawnRequest{}, tree, tree, ""},
		{"nor leaves it by cwd", inTree, gp, SpawnRequest{Cwd: filepath.Join(main, "sub")}, "", "", "outside the workspace"},
		{"a continued agent goes back to its worktree", mainCaller, gp, SpawnRequest{Cwd: tree, cwdRecorded: true}, tree, tree, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, _, err := s.prepare(tc.caller, tc.def, tc.req)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.cwd != tc.cwd || ch.policy.Workspace != tc.root || ch.caller.Workspace != tc.root {
				t.Errorf("cwd %s, root %s (caller %s); want %s, %s", ch.cwd, ch.policy.Workspace, ch.caller.Workspace, tc.cwd, tc.root)
			}
			if ch.policy.Project != main {
				t.Errorf("rules anchored at %s, want the project %s", ch.policy.Project, main)
			}
		})
	}
}
