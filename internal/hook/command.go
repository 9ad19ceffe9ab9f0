package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// outputLimit bounds what cadre keeps of a command's standard output and
// error: a hook that floods them costs memory, not the session.
const outputLimit = 1 << 20

// Command is a handler that runs command in shell (sh when empty) as
// Claude Code runs a "command" hook: in the session's working directory,
// with the event's JSON on standard input and the engine's variables in
// its environment. Exit code 0: standard output, if it is a JSON object,
// is the Output; otherwise, for UserPromptSubmit and SessionStart, it is
// context for the model. Exit code 2 blocks, standard error being the
// reason. Another code is an error that blocks nothing. When the context
// ends (the hook's timeout) the command's whole process group is killed.
func Command(command string, timeout time.Duration, shell string) Handler {
	if shell == "" {
		shell = "sh"
	}
	return Handler{
		Name: command, Timeout: timeout, key: command,
		Run: func(ctx context.Context, c Call) (Output, error) {
			return runCommand(ctx, shell, command, c)
		},
	}
}

func runCommand(ctx context.Context, shell, command string, c Call) (Output, error) {
	cmd := exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir = c.Input.Cwd
	cmd.Env = sandbox.WithoutVars(append(os.Environ(), c.Env...), c.HideEnv)
	cmd.Stdin = bytes.NewReader(c.Raw)
	stdout, stderr := &capped{}, &capped{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownProcessGroup(cmd)
	if _, err := c.Sandbox.Command(cmd, cmd.Dir, ""); err != nil {
		return Output{}, err
	}
	// A background process the hook left holding its output must not hold
	// the event.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return Output{}, context.Cause(ctx)
	}
	var exit *exec.ExitError
	switch {
	case err == nil || errors.Is(err, exec.ErrWaitDelay):
		return parseStdout(c.Input.Event, stdout.String())
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		reason := strings.TrimSpace(stderr.String())
		if reason == "" {
			reason = fmt.Sprintf("blocked by hook %s (exit code 2, no message)", command)
		}
		return Output{Decision: "block", Reason: reason}, nil
	case errors.As(err, &exit):
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "(no error output)"
		}
		return Output{}, fmt.Errorf("exit code %d: %s", exit.ExitCode(), msg)
	}
	return Output{}, fmt.Errorf("could not run: %w", err)
}

// parseStdout reads a successful command's standard output.
func parseStdout(ev Event, text string) (Output, error) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") {
		var out Output
		dec := json.NewDecoder(strings.NewReader(t))
		if err := dec.Decode(&out); err == nil {
			return out, nil
		}
	}
	if t != "" && (ev == UserPromptSubmit || ev == SessionStart) {
		return Output{HookSpecificOutput: &SpecificOutput{HookEventName: ev, AdditionalContext: t}}, nil
	}
	return Output{}, nil
}

// capped keeps the first outputLimit bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := outputLimit - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
