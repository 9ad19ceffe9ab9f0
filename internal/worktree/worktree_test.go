package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Hermetic git: no user or system configuration, and no discovery of a
	// repository that happens to enclose the temp directory.
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	goleak.VerifyTestMain(m)
}

// gitT runs git in dir for the test, with an identity for commits.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@localhost"}, args...)
	out, err := exec.Command("git", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit holding a.txt, sub/dir/b.txt
// and a .gitignore ignoring *.log; it returns the symlink-free top level.
func newRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	writeFile(t, filepath.Join(dir, "sub", "dir", "b.txt"), "b\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func create(t *testing.T, cwd, name string) *Tree {
	t.Helper()
	tr, err := Create(context.Background(), cwd, name)
	if err != nil {
		t.Fatalf("Create(%s, %s): %v", cwd, name, err)
	}
	return tr
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func branchExists(t *testing.T, repo, branch string) bool {
	t.Helper()
	return gitT(t, repo, "branch", "--list", branch) != ""
}

func registered(t *testing.T, repo, path string) bool {
	t.Helper()
	return strings.Contains(gitT(t, repo, "worktree", "list", "--porcelain"), "worktree "+path+"\n")
}

func TestCreateAtRoot(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tr := create(t, repo, "agent-1")

	want := Tree{
		Repo:   repo,
		Path:   filepath.Join(repo, ".git", "cadre-worktrees", "agent-1"),
		Branch: "cadre/agent-1",
		Base:   gitT(t, repo, "rev-parse", "HEAD"),
	}
	if diff := cmp.Diff(want, *tr); diff != "" {
		t.Fatalf("tree (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(tr.Path, "sub", "dir", "b.txt")); err != nil || string(b) != "b\n" {
		t.Fatalf("checkout in worktree: %q, %v", b, err)
	}
	if got := gitT(t, tr.Path, "symbolic-ref", "HEAD"); got != "refs/heads/cadre/agent-1" {
		t.Errorf("worktree HEAD = %s", got)
	}
	if !registered(t, repo, tr.Path) {
		t.Error("git worktree list does not show the new tree")
	}
	// Living inside .git, the tree is not untracked content of the main checkout.
	if st := gitT(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main worktree status not clean:\n%s", st)
	}
	if got := tr.Rel(repo); got != tr.Path {
		t.Errorf("Rel(root) = %s, want %s", got, tr.Path)
	}
}

func TestCreateFromSubdirAndRel(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	sub := filepath.Join(repo, "sub", "dir")
	tr := create(t, sub, "sub1")
	if tr.Repo != repo {
		t.Fatalf("Repo = %s, want %s", tr.Repo, repo)
	}

	untracked := filepath.Join(repo, "sub", "build", "out")
	if err := os.MkdirAll(untracked, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, want string
	}{
		{"root", repo, tr.Path},
		{"subdirectory", sub, filepath.Join(tr.Path, "sub", "dir")},
		{"parent subdirectory", filepath.Join(repo, "sub"), filepath.Join(tr.Path, "sub")},
		{"untracked-only directory maps to nearest existing parent", untracked, filepath.Join(tr.Path, "sub")},
		{"outside the repository", t.TempDir(), tr.Path},
		{"through a symlink", link, filepath.Join(tr.Path, "sub", "dir")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tr.Rel(tt.cwd); got != tt.want {
				t.Errorf("Rel(%s) = %s, want %s", tt.cwd, got, tt.want)
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	notRepo := t.TempDir()
	empty := t.TempDir()
	gitT(t, empty, "init", "-q")
	gitT(t, repo, "branch", "cadre/taken")
	if err := os.MkdirAll(filepath.Join(repo, ".git", "cadre-worktrees", "occupied"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, cwd, agent string
		kind             error
		msg              string
	}{
		{"not a repository", notRepo, "a", ErrNotRepo, `isolation "worktree" needs a git repository, and ` + notRepo + ` is not inside one`},
		{"inside .git", filepath.Join(repo, ".git"), "a", ErrNotRepo, "bare repository or a .git directory"},
		{"no commits", empty, "a", ErrNoCommits, "has none yet"},
		{"missing cwd", filepath.Join(notRepo, "gone"), "a", nil, "no such file or directory"},
		{"parent traversal", repo, "../x", ErrInvalidName, `"../x" is invalid`},
		{"slash", repo, "a/b", ErrInvalidName, "is invalid"},
		{"dot", repo, "a.b", ErrInvalidName, "is invalid"},
		{"space", repo, "a b", ErrInvalidName, "is invalid"},
		{"empty", repo, "", ErrInvalidName, "is invalid"},
		{"too long", repo, strings.Repeat("x", 129), ErrInvalidName, "is invalid"},
		{"branch exists", repo, "taken", ErrExists, "branch cadre/taken already exists"},
		{"path exists", repo, "occupied", ErrExists, "occupied already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Create(context.Background(), tt.cwd, tt.agent)
			if err == nil {
				t.Fatalf("Create succeeded: %+v", tr)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
	// The longest valid name is accepted.
	create(t, repo, strings.Repeat("x", 128))
	// Refusals left nothing behind.
	if branchExists(t, repo, "cadre/occupied") {
		t.Error("refused Create left a branch")
	}
}

// Not parallel: it empties PATH for the whole process.
func TestCreateWithoutGit(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("PATH", t.TempDir())
	_, err := Create(context.Background(), repo, "a")
	if !errors.Is(err, ErrGitMissing) || !strings.Contains(err.Error(), "none was found on PATH") {
		t.Fatalf("err = %v, want ErrGitMissing", err)
	}
}

func TestFinish(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		child func(t *testing.T, dir string)
		want  Outcome // Path and Branch are filled in from the tree
	}{
		{
			name:  "writes nothing",
			child: func(*testing.T, string) {},
			want:  Outcome{Summary: "no changes; worktree removed"},
		},
		{
			name: "writes only ignored files",
			child: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "build.log"), "noise")
			},
			want: Outcome{Summary: "no changes; worktree removed"},
		},
		{
			name: "edits a tracked file",
			child: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "a.txt"), "changed\n")
			},
			want: Outcome{Kept: true, Dirty: true, Summary: "changes kept in worktree {path} on branch {branch} (uncommitted changes)"},
		},
		{
			name: "adds an untracked file",
			child: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "sub", "new.txt"), "new\n")
			},
			want: Outcome{Kept: true, Dirty: true, Summary: "changes kept in worktree {path} on branch {branch} (uncommitted changes)"},
		},
		{
			name: "commits",
			child: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "a.txt"), "committed\n")
				gitT(t, dir, "commit", "-q", "-am", "child")
			},
			want: Outcome{Kept: true, Commits: 1, Summary: "changes kept in worktree {path} on branch {branch} (1 commit)"},
		},
		{
			name: "commits twice and leaves changes",
			child: func(t *testing.T, dir string) {
				gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
				gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
				writeFile(t, filepath.Join(dir, "a.txt"), "changed\n")
			},
			want: Outcome{Kept: true, Commits: 2, Dirty: true, Summary: "changes kept in worktree {path} on branch {branch} (2 commits, uncommitted changes)"},
		},
		{
			name: "resets the branch behind its start",
			child: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "c.txt"), "c\n")
				gitT(t, dir, "add", "c.txt")
				gitT(t, dir, "commit", "-q", "-m", "second")
			},
			// Filled in below: the tree starts at the second commit and the
			// child resets to the first.
		},
		{
			name: "commits on another branch",
			child: func(t *testing.T, dir string) {
				gitT(t, dir, "checkout", "-q", "-b", "other")
				gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "elsewhere")
			},
			want: Outcome{Kept: true, Summary: "changes kept in worktree {path} on branch {branch} (HEAD moved)"},
		},
		{
			name: "locks the worktree",
			child: func(t *testing.T, dir string) {
				gitT(t, dir, "worktree", "lock", dir)
			},
			want: Outcome{Kept: true, Summary: "changes kept in worktree {path} on branch {branch} (worktree locked)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			if tt.name == "resets the branch behind its start" {
				tt.child(t, repo)
				tt.child = func(t *testing.T, dir string) { gitT(t, dir, "reset", "-q", "--hard", "HEAD~1") }
				tt.want = Outcome{Kept: true, Summary: "changes kept in worktree {path} on branch {branch} (branch moved)"}
			}
			tr := create(t, repo, "child")
			tt.child(t, tr.Path)

			got, err := tr.Finish(context.Background())
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			want := tt.want
			want.Path, want.Branch = tr.Path, tr.Branch
			want.Summary = strings.NewReplacer("{path}", tr.Path, "{branch}", tr.Branch).Replace(want.Summary)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("outcome (-want +got):\n%s", diff)
			}
			if got.Kept {
				if !exists(tr.Path) || !registered(t, repo, tr.Path) || !branchExists(t, repo, tr.Branch) {
					t.Error("kept tree lost its directory, registration or branch")
				}
			} else {
				if exists(tr.Path) || registered(t, repo, tr.Path) || branchExists(t, repo, tr.Branch) {
					t.Error("removed tree left its directory, registration or branch")
				}
			}
			// The child's work never reached the main checkout.
			if st := gitT(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("main worktree changed:\n%s", st)
			}
		})
	}
}

func TestFinishTwice(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	clean := create(t, repo, "clean")
	dirty := create(t, repo, "dirty")
	writeFile(t, filepath.Join(dirty.Path, "new.txt"), "x")

	for _, tr := range []*Tree{clean, dirty} {
		first, err := tr.Finish(context.Background())
		if err != nil {
			t.Fatalf("first Finish of %s: %v", tr.Branch, err)
		}
		second, err := tr.Finish(context.Background())
		if err != nil {
			t.Fatalf("second Finish of %s: %v", tr.Branch, err)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("second Finish of %s differs (-first +second):\n%s", tr.Branch, diff)
		}
	}
}

func TestFinishWithCancelledContext(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tr := create(t, repo, "cancelled")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := tr.Finish(ctx)
	if err != nil || got.Kept {
		t.Fatalf("Finish = %+v, %v; want removed", got, err)
	}
	if exists(tr.Path) || branchExists(t, repo, tr.Branch) {
		t.Error("tree not removed")
	}
}

func TestFinishAfterDirectoryDeleted(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tr := create(t, repo, "deleted")
	if err := os.RemoveAll(tr.Path); err != nil {
		t.Fatal(err)
	}
	got, err := tr.Finish(context.Background())
	if err != nil || got.Kept {
		t.Fatalf("Finish = %+v, %v; want removed", got, err)
	}
	if registered(t, repo, tr.Path) {
		t.Error("git still lists the deleted worktree")
	}
	if branchExists(t, repo, tr.Branch) {
		t.Error("branch left behind")
	}
	// The name is free again.
	create(t, repo, "deleted")
}

// When `git worktree remove` refuses (here: the child pointed the tree's
// .git file at the main repository, so it no longer validates), Finish
// deletes the directory itself and must still unregister it.
func TestFinishWhenGitRefusesRemoval(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tr := create(t, repo, "confused")
	writeFile(t, filepath.Join(tr.Path, ".git"), "gitdir: "+filepath.Join(repo, ".git")+"\n")
	if out, err := exec.Command("git", "-C", repo, "worktree", "remove", "--force", tr.Path).CombinedOutput(); err == nil {
		t.Fatalf("setup: git removed the tree, so the fallback is not exercised:\n%s", out)
	}

	got, err := tr.Finish(context.Background())
	if err != nil || got.Kept {
		t.Fatalf("Finish = %+v, %v; want removed", got, err)
	}
	if exists(tr.Path) || registered(t, repo, tr.Path) || branchExists(t, repo, tr.Branch) {
		t.Error("tree not fully removed")
	}
}

func TestTwoTreesCoexist(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	a := create(t, repo, "a")
	b := create(t, repo, "b")
	if a.Path == b.Path || a.Branch == b.Branch {
		t.Fatalf("trees share a path or branch: %+v %+v", a, b)
	}
	writeFile(t, filepath.Join(a.Path, "a.txt"), "from a\n")
	if got, _ := os.ReadFile(filepath.Join(b.Path, "a.txt")); string(got) != "a\n" {
		t.Fatalf("b sees a's edit: %q", got)
	}

	if out, err := b.Finish(context.Background()); err != nil || out.Kept {
		t.Fatalf("Finish b = %+v, %v; want removed", out, err)
	}
	if !exists(a.Path) || !registered(t, repo, a.Path) {
		t.Fatal("removing b disturbed a")
	}
	if out, err := a.Finish(context.Background()); err != nil || !out.Kept {
		t.Fatalf("Finish a = %+v, %v; want kept", out, err)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if trees, err := Sweep(context.Background(), repo); err != nil || len(trees) != 0 {
		t.Fatalf("Sweep of a fresh repo = %v, %v", trees, err)
	}
	left := create(t, repo, "left")
	done := create(t, repo, "done")
	if _, err := done.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A worktree the user made is not ours to report.
	gitT(t, repo, "worktree", "add", "-q", filepath.Join(t.TempDir(), "mine"))

	for _, cwd := range []string{repo, filepath.Join(repo, "sub"), left.Path} {
		trees, err := Sweep(context.Background(), cwd)
		if err != nil {
			t.Fatalf("Sweep(%s): %v", cwd, err)
		}
		want := []Tree{*left}
		if cwd == left.Path {
			want[0].Repo = left.Path
		}
		if diff := cmp.Diff(want, trees); diff != "" {
			t.Errorf("Sweep(%s) (-want +got):\n%s", cwd, diff)
		}
	}

	// A swept tree finishes like the original.
	trees, _ := Sweep(context.Background(), repo)
	if out, err := trees[0].Finish(context.Background()); err != nil || out.Kept {
		t.Fatalf("Finish of swept tree = %+v, %v; want removed", out, err)
	}
	if _, err := Sweep(context.Background(), t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Sweep outside a repository: %v, want ErrNotRepo", err)
	}
}

// TestForeignGitFileRefused is issue 22's .git-file attack: a project
// whose .git is a file naming another repository's git dir must not get
// a worktree of that repository; a real linked worktree (git's own .git
// file, which its git dir names back) still works.
func TestForeignGitFileRefused(t *testing.T) {
	t.Parallel()
	private := newRepo(t)
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".git"), "gitdir: "+filepath.Join(private, ".git")+"\n")
	if _, err := Create(context.Background(), proj, "agent-x"); err == nil || !strings.Contains(err.Error(), "not this project's own git directory") {
		t.Errorf("a .git file naming another repository: %v", err)
	}
	if branchExists(t, private, "cadre/agent-x") {
		t.Error("a worktree of the other repository was made")
	}

	// A linked worktree's own .git file is fine.
	linked := filepath.Join(t.TempDir(), "linked")
	gitT(t, private, "worktree", "add", "-q", linked)
	if linked, err = filepath.EvalSymlinks(linked); err != nil {
		t.Fatal(err)
	}
	tr := create(t, linked, "agent-y")
	if _, err := tr.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
}
