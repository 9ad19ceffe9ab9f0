package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@localhost"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// worktreeChild is a main agent that starts one worktree child with the
// given prompt; a child told to EDIT writes notes.txt, one told to LOOK
// only answers.
func worktreeChild(prompt string) testkit.Handler {
	return func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if strings.Contains(body, "started by another agent") {
			if strings.Contains(body, "tool_result") {
				return testkit.Reply{Text: "child done"}
			}
			if strings.Contains(body, "EDIT") {
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Write", Input: map[string]any{"file_path": "notes.txt", "content": "changed in the worktree\n"}}}}
			}
			return testkit.Reply{Text: "child looked and changed nothing"}
		}
		if strings.Contains(body, "tool_result") {
			return testkit.Reply{Text: "main done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "isolated job", "prompt": prompt, "isolation": "worktree"}}}}
	}
}

func TestWorktreeIsolation(t *testing.T) {
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
			git(t, e.dir, "init", "-q", "-b", "main")
			git(t, e.dir, "add", "notes.txt")
			git(t, e.dir, "commit", "-q", "-m", "notes")
			// acceptEdits: a child never has more than its parent (issue 22).
			p := e.run("", "-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-5-5", "--permission-mode", "acceptEdits")
			checkWorktreeRun(t, e.dir, p, tc.kept, git)
		})
	}
}

// checkWorktreeRun checks a run whose main agent started one worktree
// child: the run succeeded, and a child that edited left its worktree and
// branch, named in the result, with the main checkout untouched; one that
// did not left neither. gitIn runs the test's git in dir.
func checkWorktreeRun(t *testing.T, dir string, p proc, kept bool, gitIn func(*testing.T, string, ...string) string) {
	t.Helper()
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != 1 || rs[0]["is_error"] == true {
		t.Fatalf("results %v", rs)
	}
	text := fmt.Sprint(rs[0]["content"])
	list := gitIn(t, dir, "worktree", "list")
	if kept {
		if !strings.Contains(text, "[worktree] changes kept in worktree") || !strings.Contains(text, "branch cadre/") {
			t.Errorf("the result does not name the kept worktree: %s", text)
		}
		if strings.Count(strings.TrimSpace(list), "\n") != 1 || !strings.Contains(list, "cadre-worktrees") {
			t.Fatalf("git worktree list:\n%s", list)
		}
		// The child's edit stayed in its worktree.
		if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); strings.Contains(string(b), "changed") {
			t.Error("the child's edit reached the main checkout")
		}
		branch := strings.Fields(list[strings.Index(list, "cadre-worktrees"):])[2]
		if !strings.HasPrefix(branch, "[cadre/") {
			t.Errorf("worktree branch %q", branch)
		}
		return
	}
	if !strings.Contains(text, "no changes; worktree removed") {
		t.Errorf("result: %s", text)
	}
	if strings.Count(strings.TrimSpace(list), "\n") != 0 {
		t.Errorf("a worktree was left behind:\n%s", list)
	}
	if branches := gitIn(t, dir, "branch", "--list", "cadre/*"); strings.TrimSpace(branches) != "" {
		t.Errorf("branches left: %s", branches)
	}
}

func TestWorktreeOutsideAGitRepository(t *testing.T) {
	srv := testkit.NewAnthropic(t, worktreeChild("LOOK"))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	rs := toolResults(t, p.stdout)
	if p.code != 0 || len(rs) != 1 || rs[0]["is_error"] != true || !strings.Contains(fmt.Sprint(rs[0]["content"]), "needs a git repository") {
		t.Fatalf("exit %d, results %v", p.code, rs)
	}
}
