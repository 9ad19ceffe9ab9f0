package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed bash.md
var bashDescription string

// sandboxRefused follows the sandbox's refusals in a Bash result.
//
//go:embed sandbox_refused.md
var sandboxRefused string

// BashInput is Bash's input, as Claude Code names it.
type BashInput struct {
	Command     string `json:"command" jsonschema:"The command to execute"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"Optional timeout in milliseconds (max 600000 for a foreground command)"`
	Description string `json:"description,omitempty" jsonschema:"Clear, concise description of what this command does in 5-10 words. Examples: Input: ls → Output: Lists files in current directory; Input: git status → Output: Shows working tree status; Input: npm install → Output: Installs package dependencies"`
	// RunInBackground starts the command as a background task (a shell
	// task, local_bash) and returns its id at once.
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema:"Set to true to run this command in the background; its id comes back at once, and you are notified when it exits. With it, timeout limits how long the command may run before it is stopped (default 1800000 ms, max 7200000 ms)"`
}

// BashMeta is the Meta of a Bash result, shaped like Claude Code's. The
// command's stdout and stderr share one pipe, so that their lines keep
// their order; Stdout holds both and Stderr is empty.
type BashMeta struct {
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	Interrupted bool   `json:"interrupted"`
	ExitCode    int    `json:"exitCode"`
	// BackgroundTaskID is the task id of a command started with
	// run_in_background (Claude Code's backgroundTaskId).
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
}

// Bash returns the Bash tool.
func Bash(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:        "Bash",
		Description: describe("Bash", bashDescription, o),
		InputSchema: schema("bash"),
		Access:      tool.AccessExec,
	}, func(ctx context.Context, env tool.Env, in BashInput) (tool.Result, error) {
		return runBash(ctx, o, env, in)
	})
	t.TargetOf = func(_ tool.Env, in BashInput) string { return in.Command }
	return &bashTool{Typed: t, o: o}
}

// errBashTimeout is the cause of a Bash call's own deadline, telling it
// apart from the caller's.
var errBashTimeout = errors.New("bash command timed out")

func runBash(ctx context.Context, o Options, env tool.Env, in BashInput) (tool.Result, error) {
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("command is empty: give the shell command to run."), nil
	}
	maxTimeout := o.BashMaxTimeout
	if in.RunInBackground {
		maxTimeout = o.BashBackgroundMaxTimeout
	}
	if in.Timeout < 0 {
		return tool.Errorf("timeout must not be negative (got %d); it is in milliseconds, at most %d.", in.Timeout, maxTimeout.Milliseconds()), nil
	}
	dir := env.Cwd
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return tool.Result{}, fmt.Errorf("bash: no working directory: %w", err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return tool.Errorf("The working directory %s does not exist or is not a directory.", dir), nil
		}
		return fsFailure("use the working directory", dir, err)
	}
	shell, err := findShell(o.Shell)
	if err != nil {
		return tool.Result{}, err
	}
	if in.RunInBackground {
		return runBackground(ctx, o, env, in, shell, dir)
	}
	timeout := o.BashDefaultTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Millisecond, o.BashMaxTimeout)
	}

	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errBashTimeout)
	defer cancel()
	// One writer for both streams makes exec share a single pipe between
	// them, so the output interleaves exactly as in a terminal.
	out := newCapture(o.BashOutputLimit)
	cmd, walls, err := bashCommand(runCtx, o, shell, dir, in.Command, out)
	if err != nil {
		return tool.Errorf("The command did not run: %v", err), nil
	}

	runErr := cmd.Run()
	text := strings.TrimRight(out.String(), "\n")
	if walls != nil {
		// Said after the output, so the model reads the refusal as the
		// sandbox's and asks for access instead of retrying.
		if lines := walls.Explain(text, dir); len(lines) > 0 {
			text += "\n\n" + strings.Join(lines, "\n") + "\n" + strings.TrimSpace(sandboxRefused)
		}
	}
	meta := BashMeta{Stdout: text}
	if cmd.ProcessState != nil {
		meta.ExitCode = cmd.ProcessState.ExitCode()
	}

	// A command that finished is reported as finished, even if a deadline
	// passed as it did.
	switch {
	case runErr != nil && ctx.Err() != nil:
		if text != "" {
			return tool.Result{}, fmt.Errorf("bash: command interrupted (%w); output so far:\n%s", context.Cause(ctx), text)
		}
		return tool.Result{}, fmt.Errorf("bash: command interrupted: %w", context.Cause(ctx))
	case runErr != nil && errors.Is(context.Cause(runCtx), errBashTimeout):
		meta.Interrupted = true
		msg := fmt.Sprintf("Command timed out after %d ms and was killed, with every process it started.", timeout.Milliseconds())
		if text != "" {
			msg += " Output so far:\n" + text
		}
		return tool.Result{Content: tool.Text(msg).Content, IsError: true, Meta: meta}, nil
	}

	var exitErr *exec.ExitError
	switch {
	case runErr == nil, errors.Is(runErr, exec.ErrWaitDelay):
		// ErrWaitDelay: the shell succeeded but left a background process
		// holding its output; that is the command's business.
		if text == "" {
			text = "(no output)"
		}
		return tool.Result{Content: tool.Text(text).Content, Meta: meta}, nil
	case errors.As(runErr, &exitErr):
		status := exitStatus(exitErr.ProcessState)
		if text != "" {
			text += "\n"
		}
		return tool.Result{Content: tool.Text(text + status).Content, IsError: true, Meta: meta}, nil
	}
	return tool.Result{}, fmt.Errorf("bash: run %q: %w", in.Command, runErr)
}

// bashCommand prepares a Bash command, foreground or background, the one
// way every command is started: shell -c command from dir, stdin closed,
// the settings' env added, in a process group of its own that ctx's end
// kills whole, and through the sandbox (sandbox.Runner.Command), whose
// policy it returns (nil when none). Both output streams go to out.
func bashCommand(ctx context.Context, o Options, shell, dir, command string, out io.Writer) (*exec.Cmd, *sandbox.Policy, error) {
	cmd := exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir = dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdin = nil // /dev/null: nothing can wait for input
	// The command gets its own process group, killed whole on timeout or
	// cancellation; WaitDelay stops stray children that still hold the
	// output pipes from holding the call.
	ownProcessGroup(cmd)
	cmd.WaitDelay = o.BashWaitDelay
	walls, err := o.Sandbox.Command(cmd, dir, command)
	if err != nil {
		return nil, nil, err
	}
	// One writer for both streams: exec shares a single pipe between them.
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, walls, nil
}

// findShell returns the shell to run commands with: the configured one,
// else bash, else sh.
func findShell(configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("bash: neither bash nor sh was found on PATH")
}

// capture keeps the first and last halves of at most limit bytes of
// output, counting what falls between, so a command printing gigabytes
// costs little memory.
type capture struct {
	limit      int
	head, tail []byte
	total      int
}

func newCapture(limit int) *capture { return &capture{limit: limit} }

// Write implements io.Writer; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += n
	headCap := c.limit / 2
	if room := headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail = append(c.tail, p...)
	if keep := c.limit - headCap; len(c.tail) > 2*keep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-keep:]...)
	}
	return n, nil
}

// String returns the output, with a marker in place of any middle part
// that did not fit.
func (c *capture) String() string {
	if c.total <= c.limit {
		return string(c.head) + string(c.tail)
	}
	keep := c.limit - c.limit/2
	head := trimPartialRuneEnd(c.head)
	tail := trimPartialRuneStart(c.tail[len(c.tail)-keep:])
	cut := c.total - len(head) - len(tail)
	return fmt.Sprintf("%s\n\n… %d characters truncated …\n\n%s", head, cut, tail)
}

func trimPartialRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

func trimPartialRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
