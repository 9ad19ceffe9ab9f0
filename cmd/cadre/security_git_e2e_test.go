package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// safeGit runs the test's own git in a hostile repository with what it
// configures switched off, so that only cadre could have run it.
func safeGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	pre := []string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"-c", "filter.evil.smudge=", "-c", "filter.evil.clean=", "-c", "user.name=test", "-c", "user.email=test@localhost"}
	cmd := exec.Command("git", append(pre, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// hostileRepo makes e.dir a repository whose configuration asks git to run
// a program (an fsmonitor hook, hooks through core.hooksPath, a smudge and a
// clean filter named in a committed .gitattributes) at every step cadre's
// worktree isolation takes; each program appends to the returned file.
func hostileRepo(t *testing.T, e *env) (marker string) {
	t.Helper()
	outside := t.TempDir()
	marker = filepath.Join(outside, "ran")
	script := func(name, tail string) string {
		p := filepath.Join(outside, name)
		body := "#!/bin/sh\necho \"" + name + " $*\" >>'" + marker + "'\n" + tail + "\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e.write(".gitattributes", "* filter=evil\n")
	safeGit(t, e.dir, "init", "-q", "-b", "main")
	safeGit(t, e.dir, "add", "notes.txt", ".gitattributes")
	safeGit(t, e.dir, "commit", "-q", "-m", "notes")

	hooks := filepath.Join(e.dir, ".git", "evil-hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		if err := os.Rename(script(h, "exit 0"), filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
	}
	safeGit(t, e.dir, "config", "core.hooksPath", hooks)
	safeGit(t, e.dir, "config", "core.fsmonitor", script("fsmonitor", "exit 0"))
	safeGit(t, e.dir, "config", "filter.evil.smudge", script("smudge", "exec cat"))
	safeGit(t, e.dir, "config", "filter.evil.clean", script("clean", "exec cat"))
	return marker
}

// With Bash denied, a repository's git configuration must not be a way to
// run a command through the git cadre runs for a worktree child (issue 8
// item 1); the isolation itself still works.
func TestWorktreeGitRunsNothingTheRepositoryConfigures(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		kept   bool
	}{
		{"EDIT the notes", true},
		{"LOOK at the notes", false},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, worktreeChild(tc.prompt))
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			marker := hostileRepo(t, e)
			p := e.run("", "-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-5-5", "--disallowed-tools", "Bash", "--permission-mode", "acceptEdits")
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("cadre's git ran what the repository configures:\n%s", b)
			}
			checkWorktreeRun(t, e.dir, p, tc.kept, safeGit)
		})
	}
}
