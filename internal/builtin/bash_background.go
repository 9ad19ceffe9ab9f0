package builtin

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// Shells runs Bash commands started with run_in_background as background
// tasks of one agent (task kind local_bash): it records the task, streams
// the output to its file, and tells the agent when the command exits. The
// subagent service implements it per agent, which BindShells gives the
// agent's Bash; a Bash with none refuses run_in_background.
type Shells interface {
	// StartShell starts sh as a task and returns at once: sh.Start has
	// run when it returns without error.
	StartShell(ctx context.Context, env tool.Env, sh Shell) (ShellStarted, error)
}

// Shell is a command to run in the background.
type Shell struct {
	Command     string
	Description string
	// Timeout is how long the command may run before it is killed.
	Timeout time.Duration
	// Start starts the command exactly as a foreground Bash command is
	// started (bashCommand: own process group, the sandbox), its output
	// going to out, and returns wait, which waits for it to end. ctx's
	// end, or Timeout, kills its process group. The task's owner calls it
	// once, and wait once if Start succeeded.
	Start func(ctx context.Context, out io.Writer) (wait func() ShellEnd, err error)
}

// ShellEnd is how a background command ended.
type ShellEnd struct {
	// ExitCode is the shell's exit status; -1 when a signal killed it.
	ExitCode int
	// Status says it in words: "exit code 2", "killed by signal 9 (killed)".
	Status string
	// TimedOut says Shell.Timeout killed it.
	TimedOut bool
	// Err is set when it could not be waited for (not an exit status).
	Err error
	// Explain says which of the command's writes or reads the sandbox
	// refused, given its output (the tail of it), as a foreground command's
	// result does; "" when it refused nothing.
	Explain func(output string) string
}

// ShellStarted is what the model is told of a background command.
type ShellStarted struct {
	// ID is the task id: TaskOutput, TaskStop and the notification name it.
	ID string
	// OutputFile is the file its output streams to.
	OutputFile string
	// Message is the call's result: the id, where the output goes, and
	// how to read and stop it, in the words of the agent's task tools.
	Message string
}

// BindShells returns t, if it is the built-in Bash, as a Bash whose
// run_in_background starts tasks through shells; any other tool as it is.
func BindShells(t tool.Tool, shells Shells) tool.Tool {
	b, ok := t.(*bashTool)
	if !ok {
		return t
	}
	o := b.o
	o.Shells = shells
	// A variant of the same tool: its description is rendered, and its
	// schema resolved, once for every agent that gets one.
	return &bashTool{Typed: b.Typed.With(b.Info(), func(ctx context.Context, env tool.Env, in BashInput) (tool.Result, error) {
		return runBash(ctx, o, env, in)
	}), o: o}
}

// bashTool is the built-in Bash, which BindShells recognises; the Typed
// it embeds gives it Target (the permission rules see the command) and
// ValidateInput.
type bashTool struct {
	*tool.Typed[BashInput]
	o Options
}

// runBackground starts in.Command as a background task and returns its id.
func runBackground(ctx context.Context, o Options, env tool.Env, in BashInput, shell, dir string) (tool.Result, error) {
	if o.Shells == nil {
		return tool.Errorf("run_in_background is not available here: run the command in the foreground (with a timeout long enough for it), or ask the agent that started you to run it."), nil
	}
	timeout := o.BashBackgroundDefaultTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Millisecond, o.BashBackgroundMaxTimeout)
	}
	sh := Shell{
		Command: in.Command, Description: in.Description, Timeout: timeout,
		Start: func(ctx context.Context, out io.Writer) (func() ShellEnd, error) {
			runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errBashTimeout)
			cmd, walls, err := bashCommand(runCtx, o, shell, dir, in.Command, out)
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				cancel()
				return nil, err
			}
			return func() ShellEnd {
				defer cancel()
				err := cmd.Wait()
				end := ShellEnd{ExitCode: -1}
				if cmd.ProcessState != nil {
					end.ExitCode = cmd.ProcessState.ExitCode()
					end.Status = strings.ToLower(exitStatus(cmd.ProcessState)[:1]) + exitStatus(cmd.ProcessState)[1:]
				}
				var exitErr *exec.ExitError
				switch {
				case err == nil, errors.Is(err, exec.ErrWaitDelay), errors.As(err, &exitErr):
				default:
					end.Err = err
				}
				end.TimedOut = errors.Is(context.Cause(runCtx), errBashTimeout) && ctx.Err() == nil
				if walls != nil {
					end.Explain = func(output string) string {
						lines := walls.Explain(output, dir)
						if len(lines) == 0 {
							return ""
						}
						return strings.Join(lines, "\n") + "\n" + strings.TrimSpace(sandboxRefused)
					}
				}
				return end
			}, nil
		},
	}
	started, err := o.Shells.StartShell(ctx, env, sh)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return tool.Errorf("The command did not start in the background: %v", err), nil
	}
	return tool.Result{Content: tool.Text(started.Message).Content, Meta: BashMeta{BackgroundTaskID: started.ID}}, nil
}
