package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/output"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/spf13/cobra"
)

// exitError carries an exit code whose reason has already been reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A reader that goes away (cadre -p … | head) must not kill the run:
	// with SIGPIPE ignored, writes fail with EPIPE, which is reported once
	// while the session still finishes and is saved.
	signal.Ignore(syscall.SIGPIPE)
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "cadre: %s\n", oneLine(err.Error()))
	return 1
}

type runFlags struct {
	print              bool
	outputFormat       string
	verbose            bool
	model              string
	maxTurns           int
	cwd                string
	systemPrompt       string
	appendSystemPrompt string
	permissionMode     string
	allowed, allowed2  []string
	denied, denied2    []string
	resume             string
	cont               bool
	debug              bool
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	root := &cobra.Command{
		Use:   "cadre [flags] [prompt]",
		Short: "cadre — an agent runtime whose agents delegate to subagents",
		Long: `cadre runs a coding agent. With -p it runs headless: it answers the prompt
(given as an argument or on standard input), using its tools, and prints the
result as text, json or stream-json (Claude Code's headless protocol).

Warnings (settings, agent files, writes that failed) go to standard error as
"cadre: warning: …" lines; --debug adds "cadre: debug: …" lines saying how
the runtime opened and how each run started and ended.`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrompt(cmd.Context(), f, args, stdin, stdout, stderr)
		},
	}
	fl := root.Flags()
	fl.BoolVarP(&f.print, "print", "p", false, "run headless: answer the prompt and exit")
	fl.StringVar(&f.outputFormat, "output-format", "text", "text, json or stream-json")
	fl.BoolVar(&f.verbose, "verbose", false, "stream-json/json: include every message, subagents' too")
	fl.StringVar(&f.model, "model", "", "model: provider:model, an alias (sonnet, opus, haiku) or a bare id")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "stop after this many model turns (0: no limit)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory (default: the current one)")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace the default system prompt")
	fl.StringVar(&f.appendSystemPrompt, "append-system-prompt", "", "append to the system prompt")
	fl.StringVar(&f.permissionMode, "permission-mode", "", "plan, default, acceptEdits or bypassPermissions")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `allow rules, e.g. "Bash(git diff:*) Edit"`)
	fl.StringArrayVar(&f.allowed2, "allowed-tools", nil, "same as --allowedTools")
	fl.StringArrayVar(&f.denied, "disallowedTools", nil, `deny rules; a bare tool name removes the tool`)
	fl.StringArrayVar(&f.denied2, "disallowed-tools", nil, "same as --disallowedTools")
	fl.StringVarP(&f.resume, "resume", "r", "", "continue the session with this id")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the newest session in this directory")
	// Persistent: the subcommands open a runtime too, and log through it.
	root.PersistentFlags().BoolVar(&f.debug, "debug", false, "log debug detail to standard error (warnings always go there)")
	root.AddCommand(versionCmd(stdout), sessionsCmd(stdout), agentsCmd(stdout), tasksCmd(stdout))
	return root
}

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print cadre's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "cadre %s\n", cadre.Version)
			return err
		},
	}
}

func rules(lists ...[]string) ([]string, error) {
	var out []string
	for _, list := range lists {
		for _, v := range list {
			rs, err := permission.ParseRuleList(v)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				out = append(out, r.String())
			}
		}
	}
	return out, nil
}

func runPrompt(ctx context.Context, f runFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	format, err := output.ParseFormat(f.outputFormat)
	if err != nil {
		return err
	}
	prompt := strings.Join(args, " ")
	if !f.print {
		if prompt == "" {
			return errors.New("the interactive interface is not built yet; run headless with -p \"prompt\" (see cadre --help)")
		}
		return errors.New("the interactive interface is not built yet; add -p to run this prompt headless")
	}
	if prompt == "" && !isTerminal(stdin) {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read prompt from standard input: %w", err)
		}
		prompt = string(b)
	}
	allowed, err := rules(f.allowed, f.allowed2)
	if err != nil {
		return fmt.Errorf("--allowedTools: %w", err)
	}
	denied, err := rules(f.denied, f.denied2)
	if err != nil {
		return fmt.Errorf("--disallowedTools: %w", err)
	}
	if f.maxTurns < 0 {
		return fmt.Errorf("--max-turns must be positive, got %d", f.maxTurns)
	}
	log := newLogger(stderr, f.debug)
	rt, err := cadre.New(ctx, cadre.Options{
		Cwd: f.cwd, Model: f.model, MaxTurns: f.maxTurns, PermissionMode: cadre.PermissionMode(f.permissionMode),
		AllowedTools: allowed, DisallowedTools: denied,
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendSystemPrompt,
		Logger: log,
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, w := range rt.Warnings() {
		log.Warn(w)
	}
	w := output.New(stdout, format, f.verbose)
	if format == output.Text {
		prog := newProgress(stderr, isTerminalWriter(stderr), time.Now)
		stopTicks := tickEvery(100*time.Millisecond, prog.Tick)
		defer func() { stopTicks(); prog.Close() }()
		w = progressWriter{Writer: w, prog: prog}
	}
	var result *cadre.ResultInfo
	var writeErr error
	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: prompt, Resume: f.resume, Continue: f.cont}) {
		if err != nil {
			return err
		}
		// A broken stdout is reported once and never stops the run.
		if err := w.Write(ev); err != nil && writeErr == nil {
			writeErr = err
			fmt.Fprintf(stderr, "cadre: writing output: %v\n", err)
		}
		if ev.Type == cadre.EventResult && ev.ParentToolUseID == "" {
			result = ev.Result
		}
	}
	if err := w.Close(); err != nil && writeErr == nil {
		fmt.Fprintf(stderr, "cadre: writing output: %v\n", err)
	}
	if result == nil {
		return errors.New("the run ended without a result")
	}
	if result.IsError {
		reason := "the run failed"
		if len(result.Errors) > 0 {
			reason = result.Errors[0]
		}
		fmt.Fprintf(stderr, "cadre: %s\n", oneLine(reason))
		return exitError{code: 1}
	}
	return nil
}

// progressWriter shows subagents' progress on stderr before the text writer
// sees an event: the live block is cleared before the answer is printed.
type progressWriter struct {
	output.Writer
	prog *progress
}

func (p progressWriter) Write(e cadre.Event) error {
	p.prog.Event(e)
	return p.Writer.Write(e)
}

// tickEvery calls fn every d until the returned stop is called; stop waits
// for the ticking goroutine to end.
func tickEvery(d time.Duration, fn func()) (stop func()) {
	t := time.NewTicker(d)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-t.C:
				fn()
			case <-done:
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		t.Stop()
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
