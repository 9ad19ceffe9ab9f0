package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/control"
	"github.com/cadre-dev/cadre/internal/output"
)

// streamInput reports whether standard input is the stream-json protocol
// (--input-format stream-json), checking the flags that go with it.
func streamInput(f runFlags, format output.Format, prompt string) (bool, error) {
	switch f.inputFormat {
	case "", "text":
		if f.sdk.permissionPromptTool != "" {
			return false, errors.New("--permission-prompt-tool needs --input-format stream-json: the answers come on standard input")
		}
		return false, nil
	case "stream-json":
	default:
		return false, fmt.Errorf("invalid --input-format %q: want text or stream-json", f.inputFormat)
	}
	if format != output.StreamJSON {
		return false, errors.New("--input-format stream-json needs --output-format stream-json")
	}
	if prompt != "" {
		return false, errors.New("--input-format stream-json takes no prompt argument: send user messages on standard input")
	}
	return true, nil
}

// runStreamInput serves the stream-json protocol on the standard streams
// until standard input ends (internal/control).
func runStreamInput(ctx context.Context, f runFlags, opts cadre.Options, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger, fail func(error) error) error {
	err := control.Run(ctx, control.RunConfig{
		Options: opts, Resume: f.resume, Continue: f.cont,
		SessionID: f.sdk.sessionID, Fork: f.sdk.forkSession, NoPersist: f.sdk.noPersist,
		PermissionPromptTool: f.sdk.permissionPromptTool, Verbose: f.verbose,
		ReplayUserMessages: f.sdk.replayUserMessages,
		In:                 stdin, Out: stdout, Warn: func(msg string) { log.Warn(msg) },
	})
	// A session that could not start is reported as -p reports it: the
	// program reads why in a result line.
	var start *control.StartError
	if errors.As(err, &start) {
		return fail(start.Err)
	}
	// The program read the error result already; the exit code is what
	// makes the Agent SDK's loop throw, as after Claude Code's.
	var failed *control.FailedError
	if errors.As(err, &failed) {
		fmt.Fprintf(stderr, "cadre: %s\n", oneLine(failed.Reason))
		return exitError{code: 1}
	}
	return err
}
