package worktree

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The repository is not trusted: whoever can write its .git/config,
// .git/info/attributes, hooks or committed .gitattributes must not get a
// command run by the git cadre runs for worktree isolation (issue 8 item 1).

// marker is where every hostile program of a test writes when it runs.
type marker string

// read returns what ran, or "" when nothing did.
func (m marker) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(string(m))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func (m marker) check(t *testing.T, after string) {
	t.Helper()
	if ran := m.read(t); ran != "" {
		t.Fatalf("a program the repository configures ran during %s:\n%s", after, ran)
	}
}

// script writes an executable shell script that appends its name and
// arguments to m, then runs tail (which keeps a filter or transport working,
// so that git goes on as far as it would for a real one).
func (m marker) script(t *testing.T, name, tail string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(string(m)), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	body := "#!/bin/sh\necho \"" + name + " $*\" >>'" + string(m) + "'\n" + tail + "\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hooks makes a directory holding every hook the commands cadre runs
// could call.
func (m marker) hooks(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman"} {
		src := m.script(t, h, "exit 0")
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func newMarker(t *testing.T) marker {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return marker(filepath.Join(dir, "ran"))
}

// touchAll rewrites every tracked text file of dir with the same content
// and a new modification time, so git must compare contents (running the
// clean filter) to see that nothing changed.
func touchAll(t *testing.T, dir string) {
	t.Helper()
	later := time.Now().Add(time.Hour)
	for _, rel := range []string{"a.txt", "sub/dir/b.txt"} {
		p := filepath.Join(dir, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	}
}

// partialClone makes a blob-less clone of a fresh repository with nothing
// checked out, so checking out HEAD has to fetch blobs from its promisor
// remote; it returns the clone.
func partialClone(t *testing.T) string {
	t.Helper()
	src := newRepo(t)
	gitT(t, src, "config", "uploadpack.allowFilter", "true")
	dst := filepath.Join(t.TempDir(), "clone")
	gitT(t, src, "clone", "-q", "--no-checkout", "--filter=blob:none", "file://"+src, dst)
	return dst
}

// lazyFetchRefused is how git refuses to fetch missing objects: a git that
// knows GIT_NO_LAZY_FETCH (2.39.4, 2.45) does not try; an older one finds no
// transport allowed.
const lazyFetchRefused = `lazy fetching disabled|transport '[a-z]+' not allowed`

func TestGitRunsNothingTheRepositoryConfigures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup makes repo hostile; it may return another directory to run
		// cadre in (a clone).
		setup func(t *testing.T, m marker, repo string) string
		// createFails matches Create's error when the checkout needs what
		// only a hostile program could provide, so refusing is right.
		createFails string
	}{
		{
			name: "fsmonitor hook in .git/config",
			setup: func(t *testing.T, m marker, repo string) string {
				gitT(t, repo, "config", "core.fsmonitor", m.script(t, "fsmonitor", "exit 0"))
				return repo
			},
		},
		{
			name: "hooks in .git/hooks",
			setup: func(t *testing.T, m marker, repo string) string {
				m.hooks(t, filepath.Join(repo, ".git", "hooks"))
				return repo
			},
		},
		{
			name: "core.hooksPath",
			setup: func(t *testing.T, m marker, repo string) string {
				dir := filepath.Join(repo, ".githooks")
				m.hooks(t, dir)
				gitT(t, repo, "config", "core.hooksPath", dir)
				return repo
			},
		},
		{
			name: "required smudge filter named in .git/info/attributes",
			setup: func(t *testing.T, m marker, repo string) string {
				gitT(t, repo, "config", "filter.evil.smudge", m.script(t, "smudge", "exec cat"))
				gitT(t, repo, "config", "filter.evil.required", "true")
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=evil\n")
				return repo
			},
		},
		{
			name: "clean filter named in a committed .gitattributes",
			setup: func(t *testing.T, m marker, repo string) string {
				writeFile(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=evil\n")
				gitT(t, repo, "add", ".gitattributes")
				gitT(t, repo, "commit", "-q", "-m", "attributes")
				gitT(t, repo, "config", "filter.evil.clean", m.script(t, "clean", "exec cat"))
				return repo
			},
		},
		{
			name: "long-running process filter",
			setup: func(t *testing.T, m marker, repo string) string {
				gitT(t, repo, "config", "filter.evil.process", m.script(t, "process", "exit 1"))
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=evil\n")
				return repo
			},
		},
		{
			name: "filter driver whose name has dots, capitals and an equals sign",
			setup: func(t *testing.T, m marker, repo string) string {
				gitT(t, repo, "config", "filter.My.Evil=1.smudge", m.script(t, "smudge", "exec cat"))
				gitT(t, repo, "config", "filter.My.Evil=1.clean", m.script(t, "clean", "exec cat"))
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=My.Evil=1\n")
				return repo
			},
		},
		{
			name: "everything from a file named by include.path",
			setup: func(t *testing.T, m marker, repo string) string {
				hooks := filepath.Join(repo, ".git", "evil-hooks")
				m.hooks(t, hooks)
				inc := filepath.Join(repo, ".git", "evil.cfg")
				writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script(t, "fsmonitor", "exit 0")+"\n\thooksPath = "+hooks+
					"\n[filter \"inc\"]\n\tsmudge = "+m.script(t, "smudge", "exec cat")+"\n\tclean = "+m.script(t, "clean", "exec cat")+"\n")
				gitT(t, repo, "config", "include.path", inc)
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=inc\n")
				return repo
			},
		},
		{
			name: "includeIf that matches only inside linked worktrees",
			setup: func(t *testing.T, m marker, repo string) string {
				inc := filepath.Join(repo, ".git", "wt.cfg")
				writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script(t, "fsmonitor", "exit 0")+
					"\n[filter \"wt\"]\n\tsmudge = "+m.script(t, "smudge", "exec cat")+"\n\tclean = "+m.script(t, "clean", "exec cat")+"\n")
				gitT(t, repo, "config", "includeIf.gitdir:**/.git/worktrees/**.path", inc)
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=wt\n")
				return repo
			},
		},
		{
			name: "includeIf onbranch of cadre's branches",
			setup: func(t *testing.T, m marker, repo string) string {
				inc := filepath.Join(repo, ".git", "branch.cfg")
				writeFile(t, inc, "[filter \"br\"]\n\tsmudge = "+m.script(t, "smudge", "exec cat")+"\n\tclean = "+m.script(t, "clean", "exec cat")+"\n")
				gitT(t, repo, "config", "includeIf.onbranch:cadre/**.path", inc)
				writeFile(t, filepath.Join(repo, ".git", "info", "attributes"), "* filter=br\n")
				return repo
			},
		},
		{
			name: "hooks path in the main worktree's config.worktree",
			setup: func(t *testing.T, m marker, repo string) string {
				hooks := filepath.Join(repo, ".git", "wt-hooks")
				m.hooks(t, hooks)
				gitT(t, repo, "config", "core.repositoryFormatVersion", "1")
				gitT(t, repo, "config", "extensions.worktreeConfig", "true")
				gitT(t, repo, "config", "--worktree", "core.hooksPath", hooks)
				gitT(t, repo, "config", "--worktree", "core.fsmonitor", m.script(t, "fsmonitor", "exit 0"))
				return repo
			},
		},
		{
			name:        "upload-pack of a promisor remote (lazy fetch in a partial clone)",
			createFails: lazyFetchRefused,
			setup: func(t *testing.T, m marker, _ string) string {
				clone := partialClone(t)
				gitT(t, clone, "config", "remote.origin.uploadpack", m.script(t, "upload-pack", `exec git upload-pack "$@"`))
				return clone
			},
		},
		{
			name:        "core.sshCommand of an ssh promisor remote",
			createFails: lazyFetchRefused,
			setup: func(t *testing.T, m marker, _ string) string {
				clone := partialClone(t)
				gitT(t, clone, "config", "remote.origin.url", "ssh://git.invalid/repo.git")
				gitT(t, clone, "config", "core.sshCommand", m.script(t, "ssh", "exit 1"))
				return clone
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			m := newMarker(t)
			repo := tt.setup(t, m, newRepo(t))
			m.check(t, "the test's setup")

			if _, err := Sweep(ctx, repo); err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			m.check(t, "Sweep")

			clean, err := Create(ctx, repo, "clean")
			m.check(t, "Create")
			if tt.createFails != "" {
				if err == nil || !regexp.MustCompile(tt.createFails).MatchString(err.Error()) {
					t.Fatalf("Create = %v, want an error containing %q", err, tt.createFails)
				}
				if exists(filepath.Join(repo, ".git", stateDirName, "clean")) {
					t.Error("the refused Create left its directory")
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(clean.Path, "sub", "dir", "b.txt")); err != nil || string(b) != "b\n" {
				t.Fatalf("checkout in worktree: %q, %v", b, err)
			}
			if out, err := clean.Finish(ctx); err != nil || out.Kept {
				t.Fatalf("Finish of an untouched tree = %+v, %v; want removed", out, err)
			}
			m.check(t, "Finish of an untouched tree")

			touched := create(t, repo, "touched")
			touchAll(t, touched.Path)
			if out, err := touched.Finish(ctx); err != nil || out.Kept {
				t.Fatalf("Finish of a tree rewritten with the same contents = %+v, %v; want removed", out, err)
			}
			m.check(t, "Finish of a tree rewritten with the same contents")

			changed := create(t, repo, "changed")
			touchAll(t, changed.Path)
			writeFile(t, filepath.Join(changed.Path, "a.txt"), "changed\n")
			writeFile(t, filepath.Join(changed.Path, "new.txt"), "new\n")
			if out, err := changed.Finish(ctx); err != nil || !out.Kept || !out.Dirty {
				t.Fatalf("Finish of a changed tree = %+v, %v; want kept and dirty", out, err)
			}
			m.check(t, "Finish of a changed tree")

			trees, err := Sweep(ctx, repo)
			if err != nil || len(trees) != 1 || trees[0].Base != changed.Base {
				t.Fatalf("Sweep with a kept tree = %+v, %v", trees, err)
			}
			m.check(t, "Sweep with a kept tree")
		})
	}
}

// A submodule the child checked out has a configuration of its own, which
// cadre never enumerated: `git status` must not descend into it, and the tree
// is kept, as its state inside the submodule is not inspected.
func TestGitDoesNotDescendIntoSubmodules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMarker(t)
	lib := newRepo(t)
	repo := newRepo(t)
	libHead := gitT(t, lib, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(repo, ".gitmodules"), "[submodule \"lib\"]\n\tpath = lib\n\turl = "+lib+"\n")
	gitT(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+libHead+",lib")
	gitT(t, repo, "add", ".gitmodules")
	gitT(t, repo, "commit", "-q", "-m", "submodule")

	tr := create(t, repo, "sub")
	// What `git submodule update --init` would leave, by hand, then made
	// hostile the way the submodule's own repository could be.
	subDir := filepath.Join(tr.Path, "lib")
	if err := os.Remove(subDir); err != nil {
		t.Fatal(err)
	}
	gitT(t, lib, "clone", "-q", lib, subDir)
	gitT(t, subDir, "config", "core.fsmonitor", m.script(t, "fsmonitor", "exit 0"))
	gitT(t, subDir, "config", "filter.subevil.clean", m.script(t, "clean", "exec cat"))
	writeFile(t, filepath.Join(subDir, ".git", "info", "attributes"), "* filter=subevil\n")
	touchAll(t, subDir)
	m.check(t, "the test's setup")

	out, err := tr.Finish(ctx)
	m.check(t, "Finish")
	if err != nil || !out.Kept || !strings.Contains(out.Summary, "submodule lib checked out") {
		t.Fatalf("Finish = %+v, %v; want kept because of the submodule", out, err)
	}

	// An uninitialised submodule (an empty directory) is no reason to keep.
	plain := create(t, repo, "plain")
	if out, err := plain.Finish(ctx); err != nil || out.Kept {
		t.Fatalf("Finish with the submodule not checked out = %+v, %v; want removed", out, err)
	}
	m.check(t, "Finish without the submodule checked out")

	// Files written into the empty directory are invisible to status, and
	// still the child's work.
	stray := create(t, repo, "stray")
	writeFile(t, filepath.Join(stray.Path, "lib", "notes.txt"), "mine\n")
	if out, err := stray.Finish(ctx); err != nil || !out.Kept || !strings.Contains(out.Summary, "files in submodule directory lib") {
		t.Fatalf("Finish with files in the submodule directory = %+v, %v; want kept", out, err)
	}
}

// The variables that would point `git config` or the transports elsewhere
// are not inherited from cadre's environment.
func TestGitEnvironment(t *testing.T) {
	t.Setenv("GIT_CONFIG", filepath.Join(t.TempDir(), "elsewhere"))
	t.Setenv("GIT_ALLOW_PROTOCOL", "file:ssh")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "user.name")
	t.Setenv("GIT_CONFIG_VALUE_0", "kept")
	env, err := gitEnv([][2]string{{"core.fsmonitor", "false"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	if _, ok := got["GIT_CONFIG"]; ok {
		t.Error("GIT_CONFIG inherited: `git config` would read another file than git does")
	}
	want := map[string]string{
		"GIT_ALLOW_PROTOCOL": "", "GIT_CONFIG_COUNT": "2",
		"GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "kept",
		"GIT_CONFIG_KEY_1": "core.fsmonitor", "GIT_CONFIG_VALUE_1": "false",
		"LC_ALL": "C",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	t.Setenv("GIT_CONFIG_COUNT", "many")
	if _, err := gitEnv(nil); err == nil || !strings.Contains(err.Error(), `GIT_CONFIG_COUNT="many"`) {
		t.Errorf("gitEnv with a bad GIT_CONFIG_COUNT: %v", err)
	}
}
