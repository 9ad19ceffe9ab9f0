package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Sweep runs on every start of cadre; in a repository where cadre never
// made a worktree (the state directory does not exist) it must not start
// git at all. A git on PATH that records its calls tells.
func TestSweepRunsNoGitWithoutStateDir(t *testing.T) {
	repo := newRepo(t)
	linked := filepath.Join(t.TempDir(), "linked")
	gitT(t, repo, "worktree", "add", "-q", linked)
	plain := t.TempDir()

	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	fake := "#!/bin/sh\necho \"$@\" >> " + calls + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)

	for _, cwd := range []string{repo, filepath.Join(repo, "sub", "dir"), linked} {
		if trees, err := Sweep(context.Background(), cwd); err != nil || len(trees) != 0 {
			t.Errorf("Sweep(%s) = %v, %v; want nothing", cwd, trees, err)
		}
	}
	if _, err := Sweep(context.Background(), plain); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Sweep outside a repository: %v, want ErrNotRepo", err)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("Sweep ran git with no state directory:\n%s", b)
	}

	// Once the state directory exists, Sweep asks git.
	if err := os.MkdirAll(filepath.Join(repo, ".git", stateDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	Sweep(context.Background(), linked)
	if _, err := os.ReadFile(calls); err != nil {
		t.Errorf("Sweep did not ask git although %s exists", stateDirName)
	}
}
