package worktree

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A scratch tree holds the checkout as it is now (uncommitted changes
// included, ignored files not), Changed after Snapshot reports only what
// happened since, and Discard removes it whatever it holds.
func TestScratchTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, "a.txt"), "a changed\n")
	writeFile(t, filepath.Join(repo, "new", "c.txt"), "c\n")
	writeFile(t, filepath.Join(repo, "x.log"), "ignored\n")
	if err := os.Remove(filepath.Join(repo, "sub", "dir", "b.txt")); err != nil {
		t.Fatal(err)
	}
	tr := create(t, repo, "replay-1")
	if err := tr.Overlay(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.Path, "a.txt")); string(b) != "a changed\n" {
		t.Errorf("a.txt in the tree: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.Path, "new", "c.txt")); string(b) != "c\n" {
		t.Errorf("untracked new/c.txt in the tree: %q", b)
	}
	if exists(filepath.Join(tr.Path, "sub", "dir", "b.txt")) || exists(filepath.Join(tr.Path, "x.log")) {
		t.Error("the deleted b.txt or the ignored x.log is in the tree")
	}
	if err := tr.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := tr.Changed(ctx); err != nil || len(got) != 0 {
		t.Errorf("Changed after Snapshot: %v, %v", got, err)
	}
	writeFile(t, filepath.Join(tr.Path, "d.txt"), "d\n")
	if err := os.Remove(filepath.Join(tr.Path, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if got, err := tr.Changed(ctx); err != nil || !slices.Equal(got, []string{"a.txt", "d.txt"}) {
		t.Errorf("Changed: %v, %v; want a.txt and d.txt", got, err)
	}
	if gitT(t, repo, "status", "--porcelain", "--", "d.txt") != "" {
		t.Error("the tree's change reached the checkout")
	}
	if err := tr.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(tr.Path) || branchExists(t, repo, tr.Branch) || registered(t, repo, tr.Path) {
		t.Error("Discard left the tree, its branch or its registration")
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "a changed\n" {
		t.Errorf("the checkout's a.txt became %q", b)
	}
}

// The attack: the repository commits `link` as a symlink to a directory
// outside; in the checkout, `link` is a real directory with an untracked
// file. Laying the checkout over the tree must not write through the
// tree's symlink.
func TestOverlayDoesNotWriteThroughASymlink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", "link")
	gitT(t, repo, "commit", "-q", "-m", "link")
	if err := os.Remove(filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "link", "x.txt"), "x\n")
	tr := create(t, repo, "replay-link")
	defer tr.Discard(ctx)
	if err := tr.Overlay(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(outside, "x.txt")) {
		t.Fatal("Overlay wrote outside the tree, through the committed symlink")
	}
	if fi, err := os.Lstat(filepath.Join(tr.Path, "link")); err != nil || !fi.IsDir() {
		t.Errorf("link in the tree: %v, %v; want a directory, as in the checkout", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.Path, "link", "x.txt")); string(b) != "x\n" {
		t.Errorf("link/x.txt in the tree: %q", b)
	}
}
