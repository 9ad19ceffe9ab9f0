package hook

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		matcher string
		match   []string
		miss    []string
	}{
		{"", []string{"Bash", "mcp__x__y"}, nil},
		{"*", []string{"Bash", "Read"}, nil},
		{"Bash", []string{"Bash"}, []string{"BashOutput", "bash", "Read"}},
		{"Edit|Write", []string{"Edit", "Write"}, []string{"Read", "MultiEdit"}},
		{"Edit, Write", []string{"Edit", "Write"}, []string{"Read"}},
		{"mcp__github__.*", []string{"mcp__github__create_issue"}, []string{"mcp__gitlab__x", "Bash"}},
		{"mcp__.*__write.*", []string{"mcp__fs__write_file"}, []string{"mcp__fs__read_file"}},
		{"Notebook.*", []string{"NotebookEdit"}, []string{"Read"}},
		{"^Read$", []string{"Read"}, []string{"ReadMe"}},
		{"Task", []string{"Agent", "Task"}, []string{"Bash"}},
		{"Agent", []string{"Task", "Agent"}, nil},
	} {
		p, err := compile(tc.matcher)
		if err != nil {
			t.Fatalf("%q: %v", tc.matcher, err)
		}
		for _, n := range tc.match {
			if !p.match(n) {
				t.Errorf("matcher %q should match %q", tc.matcher, n)
			}
		}
		for _, n := range tc.miss {
			if p.match(n) {
				t.Errorf("matcher %q should not match %q", tc.matcher, n)
			}
		}
	}
	if _, err := compile("(["); err == nil {
		t.Error("a bad regular expression must be an error")
	}
}

// TestInputJSON pins each event's input to Claude Code's shape: the
// common fields, hook_event_name, then the event's own, nothing else.
func TestInputJSON(t *testing.T) {
	base := Input{SessionID: "S", TranscriptPath: "/t/S.jsonl", Cwd: "/w", PermissionMode: "default"}
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"pre_tool_use", Input{Event: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "toolu_1"}},
		{"post_tool_use", Input{Event: PostToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolResponse: json.RawMessage(`{"stdout":"a"}`), ToolUseID: "toolu_1"}},
		{"subagent_pre_tool_use", Input{Event: PreToolUse, AgentID: "A", AgentType: "reviewer", ToolName: "Read", ToolInput: json.RawMessage(`{}`), ToolUseID: "toolu_2"}},
		{"user_prompt_submit", Input{Event: UserPromptSubmit, Prompt: "hi"}},
		{"stop", Input{Event: Stop, LastAssistantMessage: "done"}},
		{"subagent_start", Input{Event: SubagentStart, AgentID: "A", AgentType: "reviewer"}},
		{"subagent_stop", Input{Event: SubagentStop, AgentID: "A", AgentType: "reviewer", AgentTranscriptPath: "/t/A.jsonl", LastAssistantMessage: "ok"}},
		{"pre_compact", Input{Event: PreCompact, Trigger: "auto"}},
		{"session_start", Input{Event: SessionStart, Source: "startup", Model: "claude-x"}},
		{"session_end", Input{Event: SessionEnd, Reason: "other"}},
		{"notification", Input{Event: Notification, Message: "needs approval", NotificationType: "permission_prompt"}},
		{"task_created", Input{Event: TaskCreated, TaskID: "1", TaskSubject: "Write the parser", TaskDescription: "Parse it", TeammateName: "main", TeamName: "S"}},
		{"task_completed", Input{Event: TaskCompleted, AgentID: "A", AgentType: "general-purpose", TaskID: "1", TaskSubject: "Write the parser", TaskDescription: "Parse it", TeammateName: "alice", TeamName: "S"}},
		{"teammate_idle", Input{Event: TeammateIdle, AgentID: "A", AgentType: "general-purpose", TeammateName: "alice", TeamName: "S"}},
	} {
		in := tc.in
		in.SessionID, in.TranscriptPath, in.Cwd, in.PermissionMode = base.SessionID, base.TranscriptPath, base.Cwd, base.PermissionMode
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "input", tc.name+".json"), append(b, '\n'))
	}
}

func fn(out Output, err error) Handler {
	return Handler{Name: "fn", Run: func(context.Context, Call) (Output, error) { return out, err }}
}

func engine(t *testing.T, c Config) *Engine {
	t.Helper()
	e, err := New(Options{ProjectDir: t.TempDir()}, c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFold(t *testing.T) {
	f := false
	pre := Input{Event: PreToolUse, ToolName: "Bash"}
	for _, tc := range []struct {
		name     string
		handlers []Handler
		in       Input
		check    func(t *testing.T, r Result)
	}{
		{"deny wins over allow", []Handler{
			fn(Output{HookSpecificOutput: &SpecificOutput{PermissionDecision: "allow"}}, nil),
			fn(Output{HookSpecificOutput: &SpecificOutput{PermissionDecision: "deny", PermissionDecisionReason: "no"}}, nil),
		}, pre, func(t *testing.T, r Result) {
			if r.Permission != "deny" || !r.Blocked || r.Reason != "no" {
				t.Errorf("got %+v", r)
			}
		}},
		{"ask wins over allow", []Handler{
			fn(Output{HookSpecificOutput: &SpecificOutput{PermissionDecision: "allow"}}, nil),
			fn(Output{HookSpecificOutput: &SpecificOutput{PermissionDecision: "ask"}}, nil),
		}, pre, func(t *testing.T, r Result) {
			if r.Permission != "ask" || r.Blocked {
				t.Errorf("got %+v", r)
			}
		}},
		{"block on PreToolUse denies", []Handler{fn(Output{Decision: "block", Reason: "stderr text"}, nil)}, pre, func(t *testing.T, r Result) {
			if r.Permission != "deny" || r.PermissionReason != "stderr text" {
				t.Errorf("got %+v", r)
			}
		}},
		{"approve is allow", []Handler{fn(Output{Decision: "approve"}, nil)}, pre, func(t *testing.T, r Result) {
			if r.Permission != "allow" {
				t.Errorf("got %+v", r)
			}
		}},
		{"errors do not block", []Handler{fn(Output{}, errors.New("boom"))}, pre, func(t *testing.T, r Result) {
			if r.Blocked || len(r.Errors) != 1 {
				t.Errorf("got %+v", r)
			}
		}},
		{"panics do not block", []Handler{{Name: "p", Run: func(context.Context, Call) (Output, error) { panic("bug") }}}, pre, func(t *testing.T, r Result) {
			if r.Blocked || len(r.Errors) != 1 {
				t.Errorf("got %+v", r)
			}
		}},
		{"continue false stops", []Handler{fn(Output{Continue: &f, StopReason: "enough", SystemMessage: "note"}, nil)}, Input{Event: PostToolUse}, func(t *testing.T, r Result) {
			if !r.Stop || r.StopReason != "enough" || len(r.Messages) != 1 {
				t.Errorf("got %+v", r)
			}
		}},
		{"context joins", []Handler{
			fn(Output{HookSpecificOutput: &SpecificOutput{AdditionalContext: "a"}}, nil),
			fn(Output{HookSpecificOutput: &SpecificOutput{AdditionalContext: "b"}}, nil),
		}, Input{Event: UserPromptSubmit}, func(t *testing.T, r Result) {
			if r.Context != "a\nb" {
				t.Errorf("got %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine(t, Config{tc.in.Event: {{Handlers: tc.handlers}}})
			tc.check(t, e.Run(t.Context(), tc.in))
		})
	}
}

func TestMatcherSelectsHandlers(t *testing.T) {
	ran := make(chan string, 4)
	h := func(name string) Handler {
		return Handler{Name: name, Run: func(context.Context, Call) (Output, error) { ran <- name; return Output{}, nil }}
	}
	e := engine(t, Config{PreToolUse: {{Matcher: "Bash", Handlers: []Handler{h("bash")}}, {Matcher: "Read", Handlers: []Handler{h("read")}}}})
	e.Run(t.Context(), Input{Event: PreToolUse, ToolName: "Read"})
	if got := <-ran; got != "read" || len(ran) != 0 {
		t.Fatalf("ran %q and %d more; want read alone", got, len(ran))
	}
	if e.Has(Stop) || !e.Has(PreToolUse) {
		t.Error("Has is wrong")
	}
	var nilEngine *Engine
	if r := nilEngine.Run(t.Context(), Input{Event: Stop}); r.Blocked {
		t.Error("a nil engine blocked")
	}
}

// TestParallel: the hooks of one event run at once, as in Claude Code —
// each one here waits for the other to start.
func TestParallel(t *testing.T) {
	a, b := make(chan struct{}), make(chan struct{})
	wait := func(mine, other chan struct{}) Handler {
		return Handler{Name: "w", Run: func(ctx context.Context, _ Call) (Output, error) {
			close(mine)
			select {
			case <-other:
				return Output{}, nil
			case <-ctx.Done():
				return Output{}, ctx.Err()
			}
		}}
	}
	e := engine(t, Config{Stop: {{Handlers: []Handler{wait(a, b)}}, {Handlers: []Handler{wait(b, a)}}}})
	if r := e.Run(t.Context(), Input{Event: Stop}); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
}

func settings(t *testing.T, ev Event, command string, timeout float64) *Engine {
	t.Helper()
	c, warnings, err := Settings{string(ev): {{Hooks: []SettingsHook{{Type: "command", Command: command, Timeout: timeout}}}}}.Config("test", "")
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	e, err := New(Options{ProjectDir: "/project/dir"}, c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	in := Input{Event: UserPromptSubmit, Cwd: dir, SessionID: "S", Prompt: "hello"}
	for _, tc := range []struct {
		name, command string
		ev            Event
		check         func(t *testing.T, r Result)
	}{
		{"stdin is the input", `cat > in.json`, UserPromptSubmit, func(t *testing.T, r Result) {
			got, err := os.ReadFile(filepath.Join(dir, "in.json"))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(in)
			if string(got) != string(want) {
				t.Errorf("stdin %s, want %s", got, want)
			}
		}},
		{"env and cwd", `printf '%s %s %s' "$CLAUDE_PROJECT_DIR" "$CADRE_PROJECT_DIR" "$PWD"`, UserPromptSubmit, func(t *testing.T, r Result) {
			if r.Context != "/project/dir /project/dir "+dir {
				t.Errorf("context %q", r.Context)
			}
		}},
		{"plain stdout is context", `echo some context`, UserPromptSubmit, func(t *testing.T, r Result) {
			if r.Context != "some context" {
				t.Errorf("context %q", r.Context)
			}
		}},
		{"plain stdout is ignored elsewhere", `echo chatter`, Stop, func(t *testing.T, r Result) {
			if r.Context != "" || r.Blocked {
				t.Errorf("got %+v", r)
			}
		}},
		{"json stdout", `echo '{"decision":"block","reason":"not yet"}'`, Stop, func(t *testing.T, r Result) {
			if !r.Blocked || r.Reason != "not yet" {
				t.Errorf("got %+v", r)
			}
		}},
		{"exit 2 blocks with stderr", `echo "rm is not allowed" >&2; exit 2`, PreToolUse, func(t *testing.T, r Result) {
			if !r.Blocked || r.Permission != "deny" || r.Reason != "rm is not allowed" {
				t.Errorf("got %+v", r)
			}
		}},
		{"exit 1 is an error", `echo oops >&2; exit 1`, PreToolUse, func(t *testing.T, r Result) {
			if r.Blocked || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Error(), "exit code 1: oops") {
				t.Errorf("got %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := in
			in.Event = tc.ev
			if tc.ev != UserPromptSubmit {
				in.Prompt = ""
			}
			tc.check(t, settings(t, tc.ev, tc.command, 0).Run(t.Context(), in))
		})
	}
}

// TestTimeoutKillsGroup: a hook that hangs is stopped at its timeout,
// with the processes it started, and the event goes on.
func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	e := settings(t, PreToolUse, `sleep 300 & echo $! > pid; wait`, 0.3)
	r := e.Run(t.Context(), Input{Event: PreToolUse, Cwd: dir, ToolName: "Bash"})
	if r.Blocked || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Error(), "timed out") {
		t.Fatalf("got %+v", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The killed sleep may linger as a zombie until init reaps it: wait
	// for that, with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d still runs after its timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (and is no zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestSettingsConfig(t *testing.T) {
	s, err := ParseSettings(json.RawMessage(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"},{"type":"prompt","prompt":"x"}]}],"Bogus":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	c, warnings, err := s.Config("file: hooks", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c[PreToolUse]) != 1 || len(c[PreToolUse][0].Handlers) != 1 || len(warnings) != 2 {
		t.Errorf("config %+v, warnings %q", c, warnings)
	}
	if _, _, err := (Settings{"PreToolUse": {{Matcher: "(["}}}).Config("f", ""); err == nil {
		t.Error("a bad matcher must be an error")
	}
	if _, err := New(Options{}, Config{"Nope": {{}}}); err == nil {
		t.Error("an unknown event must be an error")
	}
}

// TestUserFacingTextIsLogged: systemMessage, a stop's reason and a
// failure are for the user, whom a headless run tells through its log.
func TestUserFacingTextIsLogged(t *testing.T) {
	var buf strings.Builder
	f := false
	e, err := New(Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))}, Config{PostToolUse: {{Handlers: []Handler{
		fn(Output{Continue: &f, StopReason: "quota reached", SystemMessage: "formatted 3 files"}, nil),
		fn(Output{}, errors.New("linter missing")),
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(t.Context(), Input{Event: PostToolUse, ToolName: "Edit"})
	for _, want := range []string{"quota reached", "formatted 3 files", "linter missing"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}
