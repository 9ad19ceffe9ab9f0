package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A scratch tree (cadre replay's) is a worktree that must look like the
// user's checkout as it is now, uncommitted changes included, and that
// nobody keeps: Overlay, Changed and Discard serve it.

// Overlay lays the uncommitted changes of the worktree t was made from
// (modified, added and untracked files, deletions; ignored files aside)
// over t, so that t holds what that checkout holds now.
func (t *Tree) Overlay(ctx context.Context) error {
	paths, err := statusPaths(ctx, t.Repo)
	if err != nil {
		return fmt.Errorf("worktree: listing the changes of %s: %w", t.Repo, err)
	}
	for _, rel := range paths {
		src, dst := filepath.Join(t.Repo, rel), filepath.Join(t.Path, rel)
		if _, inside := relInside(t.Path, dst); !inside || dst == t.Path {
			return fmt.Errorf("worktree: git listed a path outside the tree: %q", rel)
		}
		fi, err := os.Lstat(src)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := mkdirInside(t.Path, filepath.Dir(dst)); err != nil {
				return fmt.Errorf("worktree: %w", err)
			}
			if err := os.RemoveAll(dst); err != nil {
				return fmt.Errorf("worktree: %w", err)
			}
			continue
		case err != nil:
			return fmt.Errorf("worktree: %w", err)
		}
		// A directory of the checkout may be a symlink in the tree (a
		// committed link the checkout replaced with a directory): writing
		// through it would land outside the tree.
		if err := mkdirInside(t.Path, filepath.Dir(dst)); err != nil {
			return fmt.Errorf("worktree: copying %s: %w", rel, err)
		}
		if err := copyEntry(src, dst, fi); err != nil {
			return fmt.Errorf("worktree: copying %s: %w", rel, err)
		}
	}
	return nil
}

// Snapshot commits everything t holds (ignored files aside) on its
// branch, so that Changed reports only what happened after it. The commit
// is the scratch tree's own: Discard deletes it with the branch.
func (t *Tree) Snapshot(ctx context.Context) error {
	if _, err := git(ctx, t.Path, "add", "--all"); err != nil {
		return fmt.Errorf("worktree: snapshot of %s: %w", t.Path, err)
	}
	if _, err := git(ctx, t.Path, "-c", "user.name=cadre", "-c", "user.email=cadre@localhost", "-c", "commit.gpgsign=false",
		"commit", "--quiet", "--no-verify", "--allow-empty", "--message", "cadre: the workspace as it was"); err != nil {
		return fmt.Errorf("worktree: snapshot of %s: %w", t.Path, err)
	}
	return nil
}

// Changed lists the paths (relative to t.Path) that differ from t's
// HEAD (its starting commit, or its Snapshot): modified, added, untracked
// or deleted.
func (t *Tree) Changed(ctx context.Context) ([]string, error) {
	return statusPaths(ctx, t.Path)
}

// Discard removes t and its branch whatever they hold: a scratch tree's
// changes are not work anyone keeps.
func (t *Tree) Discard(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	name, ok := strings.CutPrefix(t.Branch, branchPrefix)
	if !ok || !validName(name) || filepath.Base(t.Path) != name || filepath.Base(filepath.Dir(t.Path)) != stateDirName {
		return fmt.Errorf("worktree: %s on branch %s is not a cadre worktree", t.Path, t.Branch)
	}
	_, statErr := os.Lstat(t.Path)
	_, branchExists, err := refCommit(ctx, t.Repo, "refs/heads/"+t.Branch)
	if err != nil {
		return fmt.Errorf("worktree: reading branch %s: %w", t.Branch, err)
	}
	if statErr != nil {
		_, _ = git(ctx, t.Repo, "worktree", "prune")
	}
	return t.remove(ctx, statErr == nil, branchExists)
}

// statusPaths lists what `git status` reports in dir, without renames
// (both sides then appear) and without ignored files.
func statusPaths(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 {
			continue
		}
		paths = append(paths, filepath.FromSlash(rec[3:]))
	}
	return paths, nil
}

// mkdirInside makes dir (inside root) a real directory, every step of the
// way: a symlink on the path is replaced by a directory, so nothing
// written under dir can leave root.
func mkdirInside(root, dir string) error {
	rel, ok := relInside(root, dir)
	if !ok {
		return fmt.Errorf("%s is outside %s", dir, root)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "" || part == "." {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := os.Remove(p); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies a regular file (with its mode) or a symlink; anything
// else (a nested repository git lists as a directory) is skipped.
func copyEntry(src, dst string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		_ = os.Remove(dst)
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		_ = os.Remove(dst) // a symlink there must not be written through
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	return nil
}
