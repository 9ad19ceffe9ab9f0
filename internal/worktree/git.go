package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// waitDelay bounds how long a git process may outlive its cancelled context
// (holding our pipes open) before it is killed outright.
const waitDelay = 5 * time.Second

// dropped reports variables that would point git at another repository than
// the one named by -C (set, for example, when cadre runs inside a git hook).
func dropped(name string) bool {
	switch name {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE",
		"GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_PREFIX", "GIT_NAMESPACE":
		return true
	}
	return false
}

// gitError is a failed git invocation: the command, what git said, and how it
// exited.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		return fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	}
	return fmt.Sprintf("git %s: %s (%v)", strings.Join(e.args, " "), msg, e.err)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is git's exit status, or -1 when it did not run to an exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func gitEnv() []string {
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !dropped(name) {
			env = append(env, kv)
		}
	}
	// LC_ALL=C keeps git's messages in English, which errors we classify
	// rely on; GIT_OPTIONAL_LOCKS=0 keeps `git status` from taking the index
	// lock and racing with whatever git the user runs meanwhile.
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
}

// git runs `git -C dir args...` and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	full := append([]string{"-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = gitEnv()
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return stdout.String(), &gitError{args: full, stderr: stderr.String(), err: err}
	}
	return stdout.String(), nil
}

// refCommit resolves ref to a commit id in dir; ok is false when it does not
// exist (as opposed to git failing).
func refCommit(ctx context.Context, dir, ref string) (id string, ok bool, err error) {
	out, err := git(ctx, dir, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}

// listEntry is one record of `git worktree list --porcelain -z`.
type listEntry struct {
	path   string
	locked bool
}

func listWorktrees(ctx context.Context, dir string) ([]listEntry, error) {
	out, err := git(ctx, dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var (
		entries []listEntry
		cur     *listEntry
	)
	// Records are NUL-terminated attribute lines, separated by an empty one.
	for _, field := range strings.Split(out, "\x00") {
		if field == "" {
			cur = nil
			continue
		}
		key, value, _ := strings.Cut(field, " ")
		if key == "worktree" {
			entries = append(entries, listEntry{path: value})
			cur = &entries[len(entries)-1]
			continue
		}
		if cur == nil {
			continue
		}
		if key == "locked" {
			cur.locked = true
		}
	}
	return entries, nil
}
