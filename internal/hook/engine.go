package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// DefaultTimeout bounds a hook that names no timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Func is one hook's code: it answers the call's input. A returned error
// is a non-blocking failure (logged; the event goes on), like a command
// that exits with a code other than 0 and 2.
type Func func(ctx context.Context, c Call) (Output, error)

// Call is one run of a hook.
type Call struct {
	Input Input
	// Raw is Input as JSON, exactly as a command reads it.
	Raw json.RawMessage
	// Env is added to a command's environment: CLAUDE_PROJECT_DIR and the
	// settings' env.
	Env []string
	// Sandbox, when set, starts the command (Options.Sandbox).
	Sandbox *sandbox.Runner
	// HideEnv are removed from a command's environment (Options.HideEnv).
	HideEnv []string
}

// Handler is one hook.
type Handler struct {
	// Name says which hook it is in logs and messages: the command, or
	// "callback".
	Name string
	Run  Func
	// Timeout bounds one run; 0 takes the matcher's, then DefaultTimeout.
	Timeout time.Duration
	// key identifies identical commands, which run once per event as in
	// Claude Code; "" for Go functions, which always run.
	key string
}

// Matcher is a group of hooks for one event and the names they match.
type Matcher struct {
	// Matcher selects the events' subjects (tool name, agent type, …; see
	// the package doc); "" and "*" select all.
	Matcher  string
	Handlers []Handler
	Timeout  time.Duration

	pattern pattern
}

// Config maps events to their matchers.
type Config map[Event][]Matcher

// Engine holds a session's hooks and runs them. A nil *Engine has no
// hooks: every method may be called on it.
type Engine struct {
	hooks   Config
	log     *slog.Logger
	env     []string
	sandbox *sandbox.Runner
	hide    []string
}

// Options configure New.
type Options struct {
	// ProjectDir is the project's root, given to commands as
	// CLAUDE_PROJECT_DIR and CADRE_PROJECT_DIR.
	ProjectDir string
	// Env is added to every command's environment (the settings' env).
	Env    []string
	Logger *slog.Logger
	// Sandbox, when set, puts command hooks inside the sandbox: the user
	// opted in (sandbox.hooks); by default they are the user's own
	// commands and run as they are.
	Sandbox *sandbox.Runner
	// HideEnv are variables no hook command inherits: the provider keys.
	// A hook reads what the model wrote; it needs no account's key.
	HideEnv []string
}

// New checks and compiles hook configurations, the later ones' matchers
// running after the earlier ones'. It returns nil when there are no hooks.
func New(opts Options, configs ...Config) (*Engine, error) {
	e := &Engine{hooks: Config{}, log: opts.Logger, sandbox: opts.Sandbox, hide: opts.HideEnv}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if opts.ProjectDir != "" {
		e.env = append(e.env, "CLAUDE_PROJECT_DIR="+opts.ProjectDir, "CADRE_PROJECT_DIR="+opts.ProjectDir)
	}
	e.env = append(e.env, opts.Env...)
	if err := e.add(configs...); err != nil {
		return nil, err
	}
	if len(e.hooks) == 0 {
		return nil, nil
	}
	return e, nil
}

func (e *Engine) add(configs ...Config) error {
	for _, c := range configs {
		for ev, ms := range c {
			if !Known(ev) {
				return fmt.Errorf("hooks: unknown event %q (cadre fires %s)", ev, eventList())
			}
			for i, m := range ms {
				p, err := compile(m.Matcher)
				if err != nil {
					return fmt.Errorf("hooks.%s[%d]: %w", ev, i, err)
				}
				m.pattern = p
				m.Handlers = append([]Handler(nil), m.Handlers...)
				e.hooks[ev] = append(e.hooks[ev], m)
			}
		}
	}
	return nil
}

func eventList() string {
	var names []string
	for _, e := range Events() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// With returns an engine with extra's hooks after e's: an agent file's own
// hooks, for that agent's session only. e is left as it was.
func (e *Engine) With(extra Config) (*Engine, error) {
	if len(extra) == 0 {
		return e, nil
	}
	out := &Engine{hooks: Config{}, log: slog.New(slog.DiscardHandler)}
	if e != nil {
		out.log, out.env = e.log, e.env
		for ev, ms := range e.hooks {
			out.hooks[ev] = append([]Matcher(nil), ms...)
		}
	}
	if err := out.add(extra); err != nil {
		return nil, err
	}
	return out, nil
}

// Has reports whether any hook is set for ev; callers skip building an
// input that nobody reads.
func (e *Engine) Has(ev Event) bool { return e != nil && len(e.hooks[ev]) > 0 }

// Result is what the hooks of one event decided together.
type Result struct {
	// Blocked: a hook blocked what the event guards (exit code 2, decision
	// "block", permissionDecision "deny"); Reason gathers why.
	Blocked bool
	Reason  string
	// Permission is the PreToolUse verdict: "deny" over "ask" over
	// "allow" over "" (no verdict); PermissionReason says why.
	Permission, PermissionReason string
	// UpdatedInput is the replacement tool input, if a hook gave one (the
	// last hook's, in settings order, when several did).
	UpdatedInput json.RawMessage
	// Context is the text hooks add to what the model sees.
	Context string
	// Stop: a hook asked the agent to stop (continue: false), with
	// StopReason for the user.
	Stop       bool
	StopReason string
	// Messages are the hooks' systemMessage texts, for the user.
	Messages []string
	// Errors are the hooks that failed without blocking.
	Errors []error
}

// answer is one handler's outcome.
type answer struct {
	out Output
	err error
}

// Run runs the hooks of in's event whose matchers fit, all at once, and
// folds their answers. It returns when all have answered or timed out.
func (e *Engine) Run(ctx context.Context, in Input) Result {
	if !e.Has(in.Event) {
		return Result{}
	}
	subj, matched := subject(&in)
	type job struct {
		h       Handler
		timeout time.Duration
	}
	var jobs []job
	seen := map[string]bool{}
	for _, m := range e.hooks[in.Event] {
		if matched && !m.pattern.match(subj) {
			continue
		}
		for _, h := range m.Handlers {
			if h.key != "" {
				if seen[h.key] {
					continue
				}
				seen[h.key] = true
			}
			t := h.Timeout
			if t <= 0 {
				t = m.Timeout
			}
			if t <= 0 {
				t = DefaultTimeout
			}
			jobs = append(jobs, job{h, t})
		}
	}
	if len(jobs) == 0 {
		return Result{}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return Result{Errors: []error{fmt.Errorf("%s hook input: %w", in.Event, err)}}
	}
	answers := make([]answer, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			hctx, cancel := context.WithTimeoutCause(ctx, j.timeout, errTimeout)
			defer cancel()
			answers[i] = call(hctx, j.h, Call{Input: in, Raw: raw, Env: e.env, Sandbox: e.sandbox, HideEnv: e.hide})
			if answers[i].err != nil && errors.Is(context.Cause(hctx), errTimeout) {
				answers[i].err = fmt.Errorf("%s hook %s timed out after %v and was stopped: %w", in.Event, j.h.Name, j.timeout, answers[i].err)
			}
		})
	}
	wg.Wait()
	res := fold(in.Event, answers)
	for _, err := range res.Errors {
		e.log.WarnContext(ctx, "hook failed", "event", in.Event, "err", err)
	}
	// systemMessage is for the user: the runtime's log is where a
	// headless run shows its warnings.
	for _, m := range res.Messages {
		e.log.WarnContext(ctx, "hook message", "event", in.Event, "message", m)
	}
	if res.Stop {
		// stopReason is for the user too; the caller ends the agent.
		e.log.WarnContext(ctx, "a hook stopped the agent (continue: false)", "event", in.Event, "reason", res.StopReason)
	}
	return res
}

var errTimeout = errors.New("hook timed out")

// call runs one handler, turning a panic into an error: a hook's bug
// costs its answer, not the session.
func call(ctx context.Context, h Handler, c Call) (a answer) {
	ev := c.Input.Event
	defer func() {
		if p := recover(); p != nil {
			a = answer{err: fmt.Errorf("%s hook %s panicked: %v", ev, h.Name, p)}
		}
	}()
	out, err := h.Run(ctx, c)
	if err != nil {
		return answer{err: fmt.Errorf("%s hook %s: %w", ev, h.Name, err)}
	}
	return answer{out: out}
}

// fold merges the answers of one event's hooks, in settings order.
func fold(ev Event, answers []answer) Result {
	var res Result
	var reasons, contexts, permReasons []string
	rank := map[string]int{"": 0, "allow": 1, "ask": 2, "deny": 3}
	for _, a := range answers {
		if a.err != nil {
			res.Errors = append(res.Errors, a.err)
			continue
		}
		o := a.out
		if o.Continue != nil && !*o.Continue {
			res.Stop = true
			if o.StopReason != "" {
				res.StopReason = join(res.StopReason, o.StopReason)
			}
		}
		if o.SystemMessage != "" {
			res.Messages = append(res.Messages, o.SystemMessage)
		}
		switch o.Decision {
		case "block":
			res.Blocked = true
			reasons = append(reasons, o.Reason)
		case "approve":
			if ev == PreToolUse && rank["allow"] > rank[res.Permission] {
				res.Permission = "allow"
			}
		}
		s := o.HookSpecificOutput
		if s == nil {
			continue
		}
		if s.AdditionalContext != "" {
			contexts = append(contexts, s.AdditionalContext)
		}
		if ev != PreToolUse {
			continue
		}
		if d := s.PermissionDecision; rank[d] > 0 {
			if rank[d] > rank[res.Permission] {
				res.Permission = d
			}
			if s.PermissionDecisionReason != "" {
				permReasons = append(permReasons, s.PermissionDecisionReason)
			}
		}
		if len(s.UpdatedInput) > 0 && string(s.UpdatedInput) != "null" {
			res.UpdatedInput = s.UpdatedInput
		}
	}
	if ev == PreToolUse && res.Blocked {
		// A PreToolUse block is a denial of the call.
		res.Permission = "deny"
		permReasons = append(reasons, permReasons...)
	}
	if res.Permission == "deny" {
		res.Blocked = true
	}
	res.Reason = strings.Join(nonEmpty(reasons), "\n")
	res.PermissionReason = strings.Join(nonEmpty(permReasons), "\n")
	if res.Permission == "deny" && res.Reason == "" {
		res.Reason = res.PermissionReason
	}
	res.Context = strings.Join(contexts, "\n")
	return res
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
