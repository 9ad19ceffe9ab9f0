package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// waitDelay bounds how long a git process may outlive its cancelled context
// (holding our pipes open) before it is killed outright.
const waitDelay = 5 * time.Second

// The repository is not trusted (issue 8): whoever can write its
// .git/config, an included file, .git/info/attributes, a committed
// .gitattributes or its hooks directory must not get a program run by the
// git cadre runs. Every invocation therefore carries settings that switch
// off each program git could take from configuration for the commands
// cadre runs (rev-parse, rev-list, branch, status, config, reset and
// worktree add/list/prune/remove/unlock):
//
//   - core.fsmonitor: the fsmonitor hook (or daemon) that status and the
//     checkout's index refresh call;
//   - core.hooksPath: every hook (post-checkout, reference-transaction,
//     post-index-change, ...), pointed at a path that cannot hold any;
//   - core.untrackedCache: off, so status finds untracked files in the
//     directories themselves, never in state cached in an index;
//   - filter.<driver>.clean/smudge/process: found per call (filterDrivers),
//     as driver names are arbitrary; required=false keeps git from failing
//     where a filter no longer runs;
//   - transports: GIT_ALLOW_PROTOCOL="" and protocol.allow=never, so the
//     lazy fetch of a partial clone cannot run a remote's uploadpack,
//     core.sshCommand, a remote helper or credential.helper;
//   - submodules: no recursion (submodule.recurse, and status looks only at
//     a submodule's recorded commit), as a submodule's configuration is a
//     repository of its own that filterDrivers does not read;
//   - gc.auto and maintenance.auto, so no command starts an automatic gc.
//
// Programs only other commands run (diff.external, textconv, core.pager,
// core.editor, gpg.program, core.alternateRefsCommand, ...) are not
// reachable from these commands; a new call site must check what its
// command may run. The overrides are passed as GIT_CONFIG_COUNT variables,
// which git reads after every configuration file (includes, includeIf and
// config.worktree too) and passes on to the git processes it starts, and
// which, unlike -c, take any key (a driver name may contain '=').

// fixedOverrides are the settings of every git call that do not depend on
// the repository.
func fixedOverrides() [][2]string {
	return [][2]string{
		{"core.fsmonitor", "false"},
		{"core.hooksPath", os.DevNull},
		{"core.untrackedCache", "false"},
		{"submodule.recurse", "false"},
		{"protocol.allow", "never"},
		{"credential.helper", ""}, // an empty value clears the list
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
	}
}

// dropped reports variables that would point git at another repository than
// the one named by -C (set, for example, when cadre runs inside a git hook),
// GIT_CONFIG, which makes `git config` read another file than the command it
// inspects for, and the variables gitEnv sets itself.
func dropped(name string) bool {
	switch name {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE",
		"GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_PREFIX", "GIT_NAMESPACE",
		"GIT_CONFIG", "GIT_CONFIG_COUNT", "GIT_ALLOW_PROTOCOL", "GIT_NO_LAZY_FETCH",
		"GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "LC_ALL":
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

// gitEnv is cadre's environment for git with the overrides appended to the
// GIT_CONFIG_COUNT list the environment may already hold (the user's own,
// kept, but read before ours).
func gitEnv(overrides [][2]string) ([]string, error) {
	inherited := 0
	if v, ok := os.LookupEnv("GIT_CONFIG_COUNT"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("GIT_CONFIG_COUNT=%q in the environment is not a count of configuration entries", v)
		}
		inherited = n
	}
	env := make([]string, 0, len(os.Environ())+2*len(overrides)+8)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if dropped(name) || staleConfigEntry(name, inherited) {
			continue
		}
		env = append(env, kv)
	}
	for i, o := range overrides {
		n := inherited + i
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, o[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, o[1]))
	}
	// LC_ALL=C keeps git's messages in English, which errors we classify
	// rely on; GIT_OPTIONAL_LOCKS=0 keeps `git status` from taking the index
	// lock and racing with whatever git the user runs meanwhile. An empty
	// GIT_ALLOW_PROTOCOL allows no transport at all; GIT_NO_LAZY_FETCH says
	// the same to a git that knows it (2.45, and the 2.39.4 security release).
	return append(env,
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", inherited+len(overrides)),
		"GIT_ALLOW_PROTOCOL=", "GIT_NO_LAZY_FETCH=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"), nil
}

// staleConfigEntry reports a GIT_CONFIG_KEY_<i> or GIT_CONFIG_VALUE_<i>
// beyond the inherited count, which git ignores and ours would replace.
func staleConfigEntry(name string, inherited int) bool {
	rest, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
	if !ok {
		rest, ok = strings.CutPrefix(name, "GIT_CONFIG_VALUE_")
	}
	if !ok {
		return false
	}
	i, err := strconv.Atoi(rest)
	return err != nil || i >= inherited
}

// git runs `git -C dir args...` and returns its standard output, with every
// filter driver configured for dir and the fixed overrides switched off.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	fixed := fixedOverrides()
	env, err := gitEnv(fixed)
	if err != nil {
		return "", err
	}
	drivers, err := filterDrivers(ctx, dir, env)
	if err != nil {
		return "", err
	}
	if len(drivers) > 0 {
		overrides := fixed
		for _, d := range drivers {
			overrides = append(overrides,
				[2]string{"filter." + d + ".clean", ""},
				[2]string{"filter." + d + ".smudge", ""},
				[2]string{"filter." + d + ".process", ""},
				[2]string{"filter." + d + ".required", "false"})
		}
		if env, err = gitEnv(overrides); err != nil {
			return "", err
		}
	}
	return run(ctx, dir, env, args...)
}

// filterDrivers names the filter drivers git's configuration defines for
// dir, in every scope and included file, as `git config` reads it there.
// The config command itself runs no configured program. What dir's
// configuration says can change between this read and the command that
// follows; the window is one process start.
func filterDrivers(ctx context.Context, dir string, env []string) ([]string, error) {
	out, err := run(ctx, dir, env, "config", "-z", "--get-regexp", `^filter\.`)
	if err != nil {
		if exitCode(err) == 1 { // no filter configured
			return nil, nil
		}
		return nil, fmt.Errorf("reading the filter drivers configured for %s: %w", dir, err)
	}
	var drivers []string
	seen := map[string]bool{}
	// Each entry is "key\nvalue\x00" (or "key\x00" for a key without a
	// value); the key is filter.<driver>.<variable>, and only the driver
	// (the subsection) may hold dots, newlines aside.
	for _, entry := range strings.Split(out, "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		rest, ok := strings.CutPrefix(key, "filter.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue // filter.<variable>: no driver
		}
		if d := rest[:i]; !seen[d] {
			seen[d] = true
			drivers = append(drivers, d)
		}
	}
	return drivers, nil
}

// run runs `git -C dir args...` with env as it is. Only git (once it knows
// the filter drivers) and reads of configuration files, which run no
// configured program, call it directly.
func run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	shown := append([]string{"-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, shown...)...)
	cmd.Env = env
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return stdout.String(), &gitError{args: shown, stderr: stderr.String(), err: err}
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

// Tracked reports whether git tracks path in the repository holding dir,
// asked the way every git here is (nothing the repository configures
// runs). A dir outside any repository tracks nothing.
func Tracked(ctx context.Context, dir, path string) (bool, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false, err
	}
	out, err := git(ctx, dir, "ls-files", "-z", "--", ":(literal)"+filepath.ToSlash(rel))
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository") {
			return false, nil
		}
		return false, err
	}
	return strings.TrimRight(out, "\x00") != "", nil
}
