package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/output"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	leanGC(leanAbove, leanPercent)
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
	sdk                sdkFlags
	inputFormat        string
	trustWorkspace     bool
	coordinator        bool
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
			return runPrompt(cmd.Context(), cmd.Flags(), f, args, stdin, stdout, stderr)
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
	fl.StringVar(&f.permissionMode, "permission-mode", "", "plan, dontAsk, default, acceptEdits, auto or bypassPermissions (docs/settings.md)")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `allow rules, e.g. "Bash(git diff:*) Edit"`)
	fl.StringArrayVar(&f.allowed2, "allowed-tools", nil, "same as --allowedTools")
	fl.StringArrayVar(&f.denied, "disallowedTools", nil, `deny rules; a bare tool name removes the tool`)
	fl.StringArrayVar(&f.denied2, "disallowed-tools", nil, "same as --disallowedTools")
	fl.StringVar(&f.inputFormat, "input-format", "text", "text, or stream-json: JSONL user messages and control requests on standard input (the Agent SDK's protocol)")
	fl.StringVarP(&f.resume, "resume", "r", "", "continue the session with this id")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the newest session in this directory")
	f.sdk.register(fl)
	fl.BoolVar(&f.coordinator, "coordinator", false, "coordinator mode: the main agent only orchestrates agents, all in the background (docs/agents.md)")
	fl.BoolVar(&f.trustWorkspace, "trust-workspace", false, "trust this project's files for this run without asking (automation; see cadre trust)")
	// Persistent: the subcommands open a runtime too, and log through it.
	root.PersistentFlags().BoolVar(&f.debug, "debug", false, "log debug detail to standard error (warnings always go there)")
	root.AddCommand(versionCmd(stdout), sessionsCmd(stdout), agentsCmd(stdout), tasksCmd(stdout), mcpCmd(stdout), sandboxCmd(stdout))
	root.AddCommand(acpCmd(stdin, stdout, stderr), serveCmd(stdout, stderr), trustCmd(stdin, stdout))
	root.AddCommand(replayCmd(stdout))
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

func runPrompt(ctx context.Context, fl *pflag.FlagSet, f runFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	format, err := output.ParseFormat(f.outputFormat)
	if err != nil {
		return err
	}
	// From here on, a failure to start is also reported as a result line
	// in json and stream-json, as Claude Code reports it: a program that
	// drives cadre reads why.
	fail := func(err error) error { return startFailure(stdout, stderr, format, f, err) }
	prompt := strings.Join(args, " ")
	streamIn, err := streamInput(f, format, prompt)
	if err != nil {
		return err
	}
	// Without -p, a terminal gets the TUI (the prompt, if any, is its
	// first message); anything else is a program that forgot -p.
	interactive := !f.print && !streamIn
	if interactive && !(isTerminal(stdin) && isTerminalWriter(stdout)) {
		if prompt == "" {
			return errors.New("the interactive interface needs a terminal; run headless with -p \"prompt\" (see cadre --help)")
		}
		return errors.New("the interactive interface needs a terminal; add -p to run this prompt headless")
	}
	if prompt == "" && !streamIn && !interactive && !isTerminal(stdin) {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read prompt from standard input: %w", err)
		}
		prompt = string(b)
	}
	allowed, err := rules(f.allowed, f.allowed2)
	if err != nil {
		return fail(fmt.Errorf("--allowedTools: %w", err))
	}
	denied, err := rules(f.denied, f.denied2)
	if err != nil {
		return fail(fmt.Errorf("--disallowedTools: %w", err))
	}
	if f.maxTurns < 0 {
		return fail(fmt.Errorf("--max-turns must be positive, got %d", f.maxTurns))
	}
	thinking, err := f.sdk.thinkingBudget()
	if err != nil {
		return fail(err)
	}
	schema, err := jsonSchema(f.sdk.jsonSchema)
	if err != nil {
		return fail(err)
	}
	// The TUI owns the screen: what the runtime logs meanwhile is held and
	// written to stderr once it has quit.
	logTo := stderr
	var held *heldLog
	if interactive {
		held = &heldLog{}
		logTo = held
		defer held.flush(stderr)
	}
	log := newLogger(logTo, f.debug)
	if f.sdk.debugFile != "" {
		// --debug-file (the Agent SDK passes it): debug detail goes to the
		// file, with a time on each record; warnings still reach stderr.
		df, err := os.OpenFile(f.sdk.debugFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fail(fmt.Errorf("--debug-file: %w", err))
		}
		defer df.Close()
		log = slog.New(slog.NewMultiHandler(log.Handler(), slog.NewTextHandler(df, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	warnIgnored(fl, log)
	if f.sdk.includePartial && format != output.StreamJSON {
		log.Warn("--include-partial-messages needs --output-format stream-json; ignored")
	}
	opts := cadre.Options{
		Cwd: f.cwd, Model: f.model, MaxTurns: f.maxTurns, PermissionMode: cadre.PermissionMode(f.permissionMode),
		AllowedTools: allowed, DisallowedTools: denied,
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendSystemPrompt,
		SettingSources: settingSources(fl, f.sdk.settingSources), Settings: f.sdk.settings,
		AdditionalDirectories: f.sdk.addDir, ToolNames: toolNames(fl, f.sdk.tools), AgentsJSON: json.RawMessage(f.sdk.agents), Agent: f.sdk.agent,
		MCPConfig: f.sdk.mcpConfig, StrictMCPConfig: f.sdk.strictMCPConfig,
		FallbackModel: f.sdk.fallbackModel, MaxBudgetUSD: f.sdk.maxBudgetUSD,
		IncludePartialMessages: f.sdk.includePartial && format == output.StreamJSON,
		Thinking:               thinking, JSONSchema: schema,
		Logger: log, TrustWorkspace: f.trustWorkspace, Coordinator: f.coordinator,
	}
	// Deferred before the runtime's Close, so it runs after it: every
	// span has ended by then.
	tp, flush := openTracing(ctx, log)
	defer flush()
	opts.TracerProvider = tp
	if interactive {
		return runTUI(ctx, f, opts, prompt, stdin, stdout)
	}
	if streamIn {
		return runStreamInput(ctx, f, opts, stdin, stdout, stderr, log, fail)
	}
	rt, err := cadre.New(ctx, opts)
	if err != nil {
		return fail(err)
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
	req := cadre.Request{
		Prompt: prompt, Resume: f.resume, Continue: f.cont,
		SessionID: f.sdk.sessionID, Fork: f.sdk.forkSession, NoPersist: f.sdk.noPersist,
	}
	for ev, err := range rt.Run(ctx, req) {
		if err != nil {
			if result == nil && format != output.Text {
				// Nothing was written yet: the result line says why.
				return fail(err)
			}
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

// startFailure reports an error that stopped the run before it started:
// on standard error always, and in json and stream-json also as the
// result line Claude Code writes then (subtype error_during_execution,
// errors[], no init line before it). The session id is the one asked
// for with --resume, else a new one, as Claude Code's is.
func startFailure(stdout, stderr io.Writer, format output.Format, f runFlags, err error) error {
	msg := oneLine(err.Error())
	fmt.Fprintf(stderr, "cadre: %s\n", msg)
	if format == output.Text {
		return exitError{code: 1}
	}
	sid := f.resume
	if f.sdk.sessionID != "" {
		sid = f.sdk.sessionID // the id the new session was to have
	}
	if sid == "" || session.ValidateID(sid) != nil {
		sid = ids.New()
	}
	w := output.New(stdout, format, f.verbose)
	if werr := w.Write(cadre.Event{
		Type: cadre.EventResult, Subtype: cadre.ResultDuringExecution, SessionID: sid, UUID: ids.New(), Time: time.Now(),
		Result: &cadre.ResultInfo{IsError: true, Errors: []string{err.Error()}},
	}); werr == nil {
		w.Close()
	}
	return exitError{code: 1}
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
