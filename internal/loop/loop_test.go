package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// echo returns a tool that answers with its input text; run, if set, runs first.
func echo(name string, safe bool, run func(ctx context.Context, in echoIn) error) tool.Tool {
	return tool.New(tool.Info{Name: name, Description: "echo", Access: tool.AccessRead, ConcurrencySafe: safe},
		func(ctx context.Context, env tool.Env, in echoIn) (tool.Result, error) {
			if run != nil {
				if err := run(ctx, in); err != nil {
					return tool.Result{}, err
				}
			}
			return tool.Text(name + ":" + in.Text), nil
		})
}

func set(t testing.TB, tools ...tool.Tool) *tool.Set {
	t.Helper()
	s, err := tool.NewSet(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func use(id, name, input string) llm.Block { return llm.ToolUse(id, name, json.RawMessage(input)) }

// scripted answers turn n (counted by assistant messages) with replies[n].
func scripted(replies ...*llm.Response) *llm.ModelFunc {
	return &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				n++
			}
		}
		if n >= len(replies) {
			return nil, errors.New("no reply scripted")
		}
		r := *replies[n]
		return &r, nil
	}}
}

func lastResults(o *Outcome) []llm.Block {
	for i := len(o.Messages) - 1; i >= 0; i-- {
		if o.Messages[i].Role == llm.RoleUser {
			return o.Messages[i].Content
		}
	}
	return nil
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		replies  []*llm.Response
		tools    []tool.Tool
		permit   Permitter
		maxTurns int
		subtype  string
		result   string
		// want is the text of each tool_result of the first tool turn, in order,
		// prefixed "!" when it must be an error.
		want    []string
		denials int
	}{
		{
			name:    "text only",
			replies: []*llm.Response{llm.Reply(llm.Text("hello"))},
			subtype: SubtypeSuccess, result: "hello",
		},
		{
			name: "tool then answer",
			replies: []*llm.Response{
				llm.Reply(llm.Text("looking"), use("t1", "echo", `{"text":"a"}`)),
				llm.Reply(llm.Text("done")),
			},
			tools:   []tool.Tool{echo("echo", true, nil)},
			subtype: SubtypeSuccess, result: "done",
			want: []string{"echo:a"},
		},
		{
			name: "schema violation is an error result and the loop goes on",
			replies: []*llm.Response{
				llm.Reply(use("t1", "echo", `{"text":3}`)),
				llm.Reply(llm.Text("fixed")),
			},
			tools:   []tool.Tool{echo("echo", true, nil)},
			subtype: SubtypeSuccess, result: "fixed",
			want: []string{"!InputValidationError"},
		},
		{
			name: "tool error",
			replies: []*llm.Response{
				llm.Reply(use("t1", "fail", `{"text":"x"}`)),
				llm.Reply(llm.Text("ok")),
			},
			tools:   []tool.Tool{echo("fail", false, func(context.Context, echoIn) error { return boom })},
			subtype: SubtypeSuccess, result: "ok",
			want: []string{"!Error: boom"},
		},
		{
			name: "tool panic costs one call",
			replies: []*llm.Response{
				llm.Reply(use("t1", "panic", `{"text":"x"}`)),
				llm.Reply(llm.Text("ok")),
			},
			tools:   []tool.Tool{echo("panic", false, func(context.Context, echoIn) error { panic("bad") })},
			subtype: SubtypeSuccess, result: "ok",
			want: []string{"!Error: tool panic crashed: bad"},
		},
		{
			name: "unknown tool",
			replies: []*llm.Response{
				llm.Reply(use("t1", "nope", `{}`)),
				llm.Reply(llm.Text("ok")),
			},
			subtype: SubtypeSuccess, result: "ok",
			want: []string{"!Error: no such tool available: nope"},
		},
		{
			name: "denied call",
			replies: []*llm.Response{
				llm.Reply(use("t1", "echo", `{"text":"a"}`), use("t2", "echo", `{"text":"b"}`)),
				llm.Reply(llm.Text("ok")),
			},
			tools: []tool.Tool{echo("echo", true, nil)},
			permit: permitFunc(func(name string, input json.RawMessage) error {
				if strings.Contains(string(input), `"b"`) {
					return errors.New(`denied by rule "echo(b)"`)
				}
				return nil
			}),
			subtype: SubtypeSuccess, result: "ok",
			want:    []string{"echo:a", `!denied by rule "echo(b)"`},
			denials: 1,
		},
		{
			name: "denied call to a removed tool names the rule",
			replies: []*llm.Response{
				llm.Reply(use("t1", "Bash", `{"command":"ls"}`)),
				llm.Reply(llm.Text("ok")),
			},
			permit: permitFunc(func(name string, _ json.RawMessage) error {
				return errors.New(`Bash is denied by rule "Bash"`)
			}),
			subtype: SubtypeSuccess, result: "ok",
			want:    []string{`!Bash is denied by rule "Bash"`},
			denials: 1,
		},
		{
			name: "max turns",
			replies: []*llm.Response{
				llm.Reply(use("t1", "echo", `{"text":"a"}`)),
				llm.Reply(use("t2", "echo", `{"text":"b"}`)),
			},
			tools:    []tool.Tool{echo("echo", true, nil)},
			maxTurns: 1,
			subtype:  SubtypeMaxTurns,
			want:     []string{"echo:a"},
		},
		{
			name:    "model failure",
			replies: nil,
			subtype: SubtypeExecution,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var steps []Step
			cfg := Config{
				Model: scripted(tc.replies...), Tools: set(t, tc.tools...), Permit: tc.permit, MaxTurns: tc.maxTurns,
				OnStep: func(_ context.Context, s Step) error { steps = append(steps, s); return nil },
			}
			out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
			if out.Subtype != tc.subtype {
				t.Fatalf("subtype = %q, want %q (err %v)", out.Subtype, tc.subtype, err)
			}
			if (err != nil) != (tc.subtype == SubtypeExecution) {
				t.Fatalf("err = %v", err)
			}
			if tc.result != "" && out.Result != tc.result {
				t.Errorf("result = %q, want %q", out.Result, tc.result)
			}
			if len(out.Denials) != tc.denials {
				t.Errorf("denials = %v, want %d", out.Denials, tc.denials)
			}
			// Every message after the prompt went through OnStep, in order.
			if got, want := len(steps), len(out.Messages)-1; got != want {
				t.Fatalf("OnStep saw %d messages, outcome has %d after the prompt", got, want)
			}
			if tc.want == nil {
				return
			}
			results := steps[1].Message.Content
			if len(results) != len(tc.want) {
				t.Fatalf("got %d results, want %d", len(results), len(tc.want))
			}
			for i, w := range tc.want {
				isErr := strings.HasPrefix(w, "!")
				w = strings.TrimPrefix(w, "!")
				if results[i].IsError != isErr || !strings.Contains(results[i].ResultText(), w) {
					t.Errorf("result %d = %q (error %v), want %q (error %v)", i, results[i].ResultText(), results[i].IsError, w, isErr)
				}
				if results[i].ToolUseID != steps[0].Message.ToolUses()[i].ID {
					t.Errorf("result %d answers %q, want call order", i, results[i].ToolUseID)
				}
			}
		})
	}
}

type permitFunc func(name string, input json.RawMessage) error

func (f permitFunc) PermitInput(_ context.Context, name string, _ tool.Tool, _ tool.Env, input json.RawMessage) (json.RawMessage, error) {
	return input, f(name, input)
}

// TestSafeToolsRunTogether proves concurrency-safe calls overlap: each waits
// until all three have started, which can only happen if they run at once.
func TestSafeToolsRunTogether(t *testing.T) {
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	wait := func(ctx context.Context, _ echoIn) error {
		started.Done()
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("calls did not overlap")
		}
	}
	cfg := Config{
		Model: scripted(
			llm.Reply(use("a", "r", `{"text":"1"}`), use("b", "r", `{"text":"2"}`), use("c", "r", `{"text":"3"}`)),
			llm.Reply(llm.Text("done")),
		),
		Tools: set(t, echo("r", true, wait)),
	}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range lastResults(&Outcome{Messages: out.Messages[:3]}) {
		if b.IsError {
			t.Errorf("result %d: %s", i, b.ResultText())
		}
	}
}

// TestUnsafeToolsRunAlone checks non-concurrency-safe calls never overlap
// and keep their order, even between safe ones.
func TestUnsafeToolsRunAlone(t *testing.T) {
	var running, peak atomic.Int32
	var mu sync.Mutex
	var order []string
	track := func(_ context.Context, in echoIn) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, in.Text)
		mu.Unlock()
		return nil
	}
	cfg := Config{
		Model: scripted(
			llm.Reply(use("a", "w", `{"text":"1"}`), use("b", "w", `{"text":"2"}`), use("c", "w", `{"text":"3"}`)),
			llm.Reply(llm.Text("done")),
		),
		Tools: set(t, echo("w", false, track)),
	}
	if _, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")}); err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 1 {
		t.Errorf("peak concurrency %d, want 1", peak.Load())
	}
	if strings.Join(order, "") != "123" {
		t.Errorf("order %v", order)
	}
}

func TestCancelDuringToolRecordsInterruptedResults(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := func(ctx context.Context, _ echoIn) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	var steps []Step
	cfg := Config{
		Model: scripted(llm.Reply(use("a", "slow", `{"text":"1"}`), use("b", "slow", `{"text":"2"}`))),
		Tools: set(t, echo("slow", false, block)),
		OnStep: func(_ context.Context, s Step) error {
			steps = append(steps, s)
			return nil
		},
	}
	out, err := Run(ctx, cfg, []llm.Message{llm.UserText("go")})
	if !errors.Is(err, context.Canceled) || out.Subtype != SubtypeExecution {
		t.Fatalf("err = %v, subtype %q", err, out.Subtype)
	}
	// The transcript stays valid: every tool_use got a tool_result.
	if len(steps) != 2 || len(steps[1].Message.Content) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	for _, b := range steps[1].Message.Content {
		if !b.IsError || !strings.Contains(b.ResultText(), "Interrupted") {
			t.Errorf("result %q, want an interrupted error", b.ResultText())
		}
	}
}

func TestInboxDeliveredAtLoopBoundary(t *testing.T) {
	var mu sync.Mutex
	inbox := []llm.Message{llm.UserText("also check the tests")}
	var sawNote bool
	model := &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Text() == "also check the tests" {
			sawNote = true
			return llm.Reply(llm.Text("checked")), nil
		}
		if len(req.Messages) == 1 {
			return llm.Reply(use("a", "echo", `{"text":"1"}`)), nil
		}
		return llm.Reply(llm.Text("done")), nil
	}}
	cfg := Config{
		Model: model, Tools: set(t, echo("echo", true, nil)),
		Inbox: func() []llm.Message {
			mu.Lock()
			defer mu.Unlock()
			m := inbox
			inbox = nil
			return m
		},
	}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if !sawNote || out.Result != "checked" {
		t.Errorf("inbox message not delivered before the next model call: result %q", out.Result)
	}
}

// TestOnInboxRecordsABoundaryAtOnce: with OnInbox set, a boundary's
// inbox messages are recorded in one call, not one OnStep each, and join
// the history in order; its error stops the run.
func TestOnInboxRecordsABoundaryAtOnce(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			inbox := []llm.Message{llm.UserText("n1"), llm.UserText("n2"), llm.UserText("n3")}
			var batches [][]string
			var stepped []string
			cfg := Config{
				Model: scripted(llm.Reply(use("a", "echo", `{"text":"1"}`)), llm.Reply(llm.Text("done"))),
				Tools: set(t, echo("echo", true, nil)),
				Inbox: func() []llm.Message { m := inbox; inbox = nil; return m },
				OnInbox: func(_ context.Context, msgs []llm.Message) error {
					var b []string
					for _, m := range msgs {
						b = append(b, m.Text())
					}
					batches = append(batches, b)
					if fail {
						return errors.New("server gone")
					}
					return nil
				},
				OnStep: func(_ context.Context, s Step) error {
					stepped = append(stepped, string(s.Message.Role)+":"+s.Message.Text())
					return nil
				},
			}
			out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
			if diff := cmp.Diff([][]string{{"n1", "n2", "n3"}}, batches); diff != "" {
				t.Errorf("OnInbox calls (-want +got):\n%s", diff)
			}
			if slices.Contains(stepped, "user:n1") {
				t.Errorf("OnStep saw an inbox message too: %q", stepped)
			}
			if fail {
				if err == nil || !strings.Contains(err.Error(), "server gone") || out.Subtype != SubtypeExecution {
					t.Fatalf("with OnInbox failing: err %v, subtype %q; want the run stopped with its error", err, out.Subtype)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range out.Messages[3:6] {
				texts = append(texts, m.Text())
			}
			if !slices.Equal(texts, []string{"n1", "n2", "n3"}) {
				t.Errorf("history after the tool round: %q, want the inbox messages in order", texts)
			}
		})
	}
}

func TestOnStepErrorStopsTheRun(t *testing.T) {
	cfg := Config{
		Model:  scripted(llm.Reply(llm.Text("hi"))),
		OnStep: func(context.Context, Step) error { return errors.New("disk full") },
	}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err == nil || !strings.Contains(err.Error(), "disk full") || out.Subtype != SubtypeExecution {
		t.Fatalf("err = %v, subtype %q", err, out.Subtype)
	}
}

func TestUsageAggregated(t *testing.T) {
	r1 := llm.Reply(use("a", "echo", `{"text":"1"}`))
	r1.Usage = llm.Usage{InputTokens: 10, OutputTokens: 2, CacheReadInputTokens: 5}
	r2 := llm.Reply(llm.Text("done"))
	r2.Usage = llm.Usage{InputTokens: 20, OutputTokens: 3, CacheCreationInputTokens: 7}
	out, err := Run(context.Background(), Config{Model: scripted(r1, r2), Tools: set(t, echo("echo", true, nil))}, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 30, OutputTokens: 5, CacheReadInputTokens: 5, CacheCreationInputTokens: 7}
	if out.Usage != want || out.Turns != 2 || out.ToolUses != 1 {
		t.Errorf("usage %+v turns %d tool uses %d", out.Usage, out.Turns, out.ToolUses)
	}
}

// TestSystemContextIsFreshEachTurn: the per-turn context is asked for
// before every call and goes to the model after the conversation, as a
// <system-reminder> ending the newest user message; the system prompt and
// the conversation — what the prompt cache holds — stay as they were, and
// the context is never recorded.
func TestSystemContextIsFreshEachTurn(t *testing.T) {
	n := 0
	var reqs []llm.Request
	model := &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		r := *req
		r.Messages = slices.Clone(req.Messages)
		reqs = append(reqs, r)
		if len(req.Messages) == 1 {
			return llm.Reply(use("a", "echo", `{"text":"1"}`)), nil
		}
		return llm.Reply(llm.Text("done")), nil
	}}
	var recorded []llm.Message
	cfg := Config{Model: model, System: "base", Tools: set(t, echo("echo", true, nil)),
		SystemContext: func(context.Context) string { n++; return fmt.Sprintf("context %d", n) },
		OnStep: func(_ context.Context, s Step) error {
			recorded = append(recorded, s.Message)
			return nil
		}}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.System != "base" {
			t.Errorf("call %d: system %q, want the base prompt alone", i, r.System)
		}
		last := r.Messages[len(r.Messages)-1]
		tail := last.Content[len(last.Content)-1]
		want := fmt.Sprintf("<system-reminder>\ncontext %d\n</system-reminder>", i+1)
		if last.Role != llm.RoleUser || tail.Text != want || !tail.PerTurn {
			t.Errorf("call %d ends with %s %+v, want the user message ending with the per-turn %q", i, last.Role, tail, want)
		}
		if strings.Contains(last.Text(), "context") {
			t.Errorf("call %d: Text() of the newest message holds the per-turn context: %q", i, last.Text())
		}
	}
	// The second call repeats the first's messages without its context.
	if first := reqs[1].Messages[0]; len(first.Content) != 1 || first.Text() != "go" {
		t.Errorf("the second call's first message is %+v, want the prompt alone", first)
	}
	for _, m := range append(recorded, out.Messages...) {
		for _, b := range m.Content {
			if b.PerTurn || strings.Contains(b.Text, "system-reminder") {
				t.Errorf("the per-turn context was recorded in the conversation: %+v", m)
			}
		}
	}
}

// TestPreambleOpensEveryCall: the session's context files go at the start
// of the first user message of every call, the same each time, and are
// never recorded.
func TestPreambleOpensEveryCall(t *testing.T) {
	var reqs []llm.Request
	model := &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		r := *req
		r.Messages = slices.Clone(req.Messages)
		reqs = append(reqs, r)
		if len(req.Messages) == 1 {
			return llm.Reply(use("a", "echo", `{"text":"1"}`)), nil
		}
		return llm.Reply(llm.Text("done")), nil
	}}
	var recorded []llm.Message
	cfg := Config{Model: model, Tools: set(t, echo("echo", true, nil)),
		Preamble: []llm.Block{llm.Text("PROJECT RULES")},
		OnStep: func(_ context.Context, s Step) error {
			recorded = append(recorded, s.Message)
			return nil
		}}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	for i, r := range reqs {
		first := r.Messages[0]
		if first.Role != llm.RoleUser || len(first.Content) != 2 || first.Content[0].Text != "PROJECT RULES" || first.Content[1].Text != "go" {
			t.Errorf("call %d opens with %+v, want the preamble then the prompt", i, first)
		}
	}
	for _, m := range append(recorded, out.Messages...) {
		if strings.Contains(m.Text(), "PROJECT RULES") {
			t.Errorf("the preamble was recorded in the conversation: %+v", m)
		}
	}
}

func TestAliasCallsTheTool(t *testing.T) {
	agent := tool.New(tool.Info{Name: "Agent", Aliases: []string{"Task"}, Access: tool.AccessOther},
		func(_ context.Context, _ tool.Env, in echoIn) (tool.Result, error) {
			return tool.Text("spawned " + in.Text), nil
		})
	cfg := Config{
		Model: scripted(llm.Reply(use("a", "Task", `{"text":"x"}`)), llm.Reply(llm.Text("done"))),
		Tools: set(t, agent),
	}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Messages[2].Content[0].ResultText(); got != "spawned x" {
		t.Errorf("result %q", got)
	}
	if names := cfg.Tools.Names(); len(names) != 1 || names[0] != "Agent" {
		t.Errorf("names %v: aliases must not be offered", names)
	}
}

// toolTurns is a model that calls echo on its first n calls, then answers
// "done"; call i reports usage of 100·i input tokens. It counts its own
// calls, since a compacted history no longer does. reqs receives a copy of
// each request's messages.
func toolTurns(n int, reqs *[][]llm.Message) *llm.ModelFunc {
	calls := 0
	return &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		*reqs = append(*reqs, append([]llm.Message(nil), req.Messages...))
		r := llm.Reply(llm.Text("done"))
		if calls <= n {
			r = llm.Reply(use(fmt.Sprint("t", calls), "echo", `{"text":"x"}`))
		}
		r.Usage = llm.Usage{InputTokens: int64(100 * calls), OutputTokens: 1}
		return r, nil
	}}
}

func TestCompactReplacesTheHistory(t *testing.T) {
	var reqs [][]llm.Message
	var steps []Step
	var lasts []llm.Usage
	var seen [][]llm.Message
	note := llm.UserText("a queued note")
	inboxCalls := 0
	summary := llm.UserText("<context-summary>earlier turns</context-summary>")
	cfg := Config{
		Model: toolTurns(3, &reqs), Tools: set(t, echo("echo", true, nil)),
		OnStep: func(_ context.Context, s Step) error { steps = append(steps, s); return nil },
		Inbox: func() []llm.Message {
			inboxCalls++
			if inboxCalls == 2 {
				return []llm.Message{note}
			}
			return nil
		},
		Compact: func(_ context.Context, msgs []llm.Message, last llm.Usage) ([]llm.Message, *llm.Message, error) {
			lasts = append(lasts, last)
			seen = append(seen, msgs)
			if len(lasts) != 2 {
				return msgs, nil, nil
			}
			// Keep the last tool round and the note.
			kept := msgs[len(msgs)-3:]
			return append([]llm.Message{summary}, kept...), &summary, nil
		},
	}
	out, err := Run(t.Context(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	// Called before every model call but the first, with the usage of the
	// response before it plus the estimate of what came after it: the
	// tool result "echo:x" (1 token at four characters a token), and the
	// second time the note too ((6+13)/4 = 4).
	want := []llm.Usage{{InputTokens: 101, OutputTokens: 1}, {InputTokens: 204, OutputTokens: 1}, {InputTokens: 301, OutputTokens: 1}}
	if diff := cmp.Diff(want, lasts); diff != "" {
		t.Fatalf("usage passed to Compact (-want +got):\n%s", diff)
	}
	// The inbox is drained first, so the hook sees (and can keep) the note.
	if got := seen[1][len(seen[1])-1]; got.Text() != note.Text() {
		t.Errorf("Compact saw %q last, want the queued note", got.Text())
	}
	kept := seen[1][len(seen[1])-3:]
	wantReq := append([]llm.Message{summary}, kept...)
	if diff := cmp.Diff(wantReq, reqs[2]); diff != "" {
		t.Errorf("request after the compaction (-want +got):\n%s", diff)
	}
	// The summary went through OnStep, between the note and the next reply.
	var i int
	for i = range steps {
		if steps[i].Compaction {
			break
		}
	}
	s := steps[i]
	if !s.Compaction || s.Message.Text() != summary.Text() || s.PreTokens != 205 {
		t.Fatalf("compaction step = %+v", s)
	}
	if diff := cmp.Diff(kept, s.Kept); diff != "" {
		t.Errorf("Kept (-want +got):\n%s", diff)
	}
	if steps[i-1].Message.Text() != note.Text() || steps[i+1].Response == nil {
		t.Errorf("compaction step not between the note and the next reply")
	}
	if n := compactions(steps); n != 1 {
		t.Errorf("%d compaction steps, want 1", n)
	}
	// The outcome holds the compacted conversation.
	if diff := cmp.Diff(reqs[3], out.Messages[:len(out.Messages)-1]); diff != "" {
		t.Errorf("outcome messages (-want +got):\n%s", diff)
	}
	if out.Messages[0].Text() != summary.Text() || out.Result != "done" || len(out.Warnings) != 0 {
		t.Errorf("outcome starts with %q, result %q, warnings %q", out.Messages[0].Text(), out.Result, out.Warnings)
	}
}

func compactions(steps []Step) int {
	n := 0
	for _, s := range steps {
		if s.Compaction {
			n++
		}
	}
	return n
}

func TestCompactFailures(t *testing.T) {
	summary := llm.UserText("summary")
	tests := []struct {
		name    string
		hook    func(ctx context.Context, cancel context.CancelFunc, msgs []llm.Message) ([]llm.Message, *llm.Message, error)
		onStep  error
		warning string // "" means none
		err     string // "" means the run succeeds
	}{
		{
			name: "error: a warning, and the full history goes on",
			hook: func(context.Context, context.CancelFunc, []llm.Message) ([]llm.Message, *llm.Message, error) {
				return nil, nil, errors.New("summarizer overloaded")
			},
			warning: "context compaction failed, going on with the full history: summarizer overloaded",
		},
		{
			name: "a history that does not start with its summary is refused",
			hook: func(_ context.Context, _ context.CancelFunc, msgs []llm.Message) ([]llm.Message, *llm.Message, error) {
				return msgs[len(msgs)-1:], &summary, nil
			},
			warning: "does not start with its summary",
		},
		{
			name: "cancelled while compacting: the run stops, no warning",
			hook: func(ctx context.Context, cancel context.CancelFunc, _ []llm.Message) ([]llm.Message, *llm.Message, error) {
				cancel()
				return nil, nil, ctx.Err()
			},
			err: "context canceled",
		},
		{
			name: "a summary that cannot be recorded stops the run",
			hook: func(_ context.Context, _ context.CancelFunc, msgs []llm.Message) ([]llm.Message, *llm.Message, error) {
				return append([]llm.Message{summary}, msgs[len(msgs)-2:]...), &summary, nil
			},
			onStep: errors.New("disk full"),
			err:    "recording the context summary: disk full",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var reqs [][]llm.Message
			var logged bytes.Buffer
			cfg := Config{
				Model: toolTurns(1, &reqs), Tools: set(t, echo("echo", true, nil)),
				OnStep: func(_ context.Context, s Step) error {
					if s.Compaction {
						return tt.onStep
					}
					return nil
				},
				Compact: func(ctx context.Context, msgs []llm.Message, _ llm.Usage) ([]llm.Message, *llm.Message, error) {
					return tt.hook(ctx, cancel, msgs)
				},
				Agent: "main", Env: tool.Env{SessionID: "s-1"},
				Logger: slog.New(slog.NewTextHandler(&logged, nil)),
			}
			out, err := Run(ctx, cfg, []llm.Message{llm.UserText("go")})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || out.Subtype != SubtypeExecution {
					t.Fatalf("err = %v, subtype %q; want %q", err, out.Subtype, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.warning == "" && len(out.Warnings) > 0:
				t.Errorf("warnings %q, want none", out.Warnings)
			case tt.warning != "" && (len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], tt.warning)):
				t.Errorf("warnings %q, want one containing %q", out.Warnings, tt.warning)
			}
			// The warning reaches the logger too, naming the session.
			log := logged.String()
			switch {
			case tt.warning == "" && log != "":
				t.Errorf("logged %q, want nothing", log)
			case tt.warning != "" && (!strings.Contains(log, "level=WARN") || !strings.Contains(log, "session_id=s-1") || !strings.Contains(log, tt.warning[max(0, len(tt.warning)-20):])):
				t.Errorf("logged %q, want a warning about %q for session s-1", log, tt.warning)
			}
			if tt.err == "" {
				// The second request carries the whole history, uncompacted.
				if len(reqs) != 2 || len(reqs[1]) != 3 || reqs[1][0].Text() != "go" {
					t.Errorf("requests %+v, want the full history in the second", reqs)
				}
			}
		})
	}
}

func TestLongHistoryIsCompactedBeforeTheFirstCall(t *testing.T) {
	long := strings.Repeat("x", 4000) // ~1000 tokens
	history := []llm.Message{llm.UserText(long), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(long)}}, llm.UserText("go on")}
	var seen llm.Usage
	var firstLen int
	cfg := Config{
		Model: &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			if firstLen == 0 {
				firstLen = len(req.Messages)
			}
			return llm.Reply(llm.Text("ok")), nil
		}},
		Compact: func(_ context.Context, msgs []llm.Message, last llm.Usage) ([]llm.Message, *llm.Message, error) {
			seen = last
			sum := llm.UserText("<context-summary>short</context-summary>")
			return []llm.Message{sum, {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("…")}}, msgs[len(msgs)-1]}, &sum, nil
		},
	}
	if _, err := Run(context.Background(), cfg, history); err != nil {
		t.Fatal(err)
	}
	if seen.InputTokens < 1500 || firstLen != 3 {
		t.Errorf("hook saw %+v before the first call; first request had %d messages", seen, firstLen)
	}
}

// filteringPermit allows every call and hides paths with "secret" in them.
type filteringPermit struct{}

func (filteringPermit) PermitInput(_ context.Context, _ string, _ tool.Tool, _ tool.Env, in json.RawMessage) (json.RawMessage, error) {
	return in, nil
}

func (filteringPermit) ReadFilter(string, tool.Tool, tool.Env) func(string) bool {
	return func(path string) bool { return !strings.Contains(path, "secret") }
}

// The permission layer's read filter reaches the tool through its Env.
func TestReadFilterReachesTheTool(t *testing.T) {
	probe := tool.New(tool.Info{Name: "Probe", Access: tool.AccessRead},
		func(_ context.Context, env tool.Env, in echoIn) (tool.Result, error) {
			if env.Readable == nil {
				return tool.Text("no filter"), nil
			}
			return tool.Text(fmt.Sprintf("%s readable: %v", in.Text, env.Readable(in.Text))), nil
		})
	cfg := Config{
		Model: scripted(&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{use("u1", "Probe", `{"text":"/ws/secret.txt"}`)}}, StopReason: llm.StopToolUse},
			&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("done")}}}),
		Tools: set(t, probe), Permit: filteringPermit{},
	}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Messages[2].Content[0].ResultText(); got != "/ws/secret.txt readable: false" {
		t.Errorf("tool saw %q", got)
	}
}

// TestMeasuredContextDecidesCompaction: before a run's first call the
// context is what an earlier response measured plus an estimate of the
// messages added since; only a history nothing measured is estimated
// whole.
func TestMeasuredContextDecidesCompaction(t *testing.T) {
	long := strings.Repeat("x", 8000) // 2,000 tokens at four characters a token
	short := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("ok")}}, llm.UserText("go on")}
	longFirst := []llm.Message{llm.UserText(long), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("ok")}}, llm.UserText("go on")}
	longAdded := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("ok")}}, llm.UserText(long)}
	const threshold = 1000
	tests := []struct {
		name      string
		history   []llm.Message
		measured  Measured
		wantSize  int64 // the size the hook saw before the first call
		compacted bool
	}{
		{"measured small, estimate over the threshold: not compacted", longFirst,
			Measured{Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}, Through: 2}, 111, false},
		{"measured over the threshold: compacted", short,
			Measured{Usage: llm.Usage{InputTokens: 900, CacheReadInputTokens: 200, OutputTokens: 10}, Through: 2}, 1111, true},
		{"measured small, a huge message added since: compacted", longAdded,
			Measured{Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}, Through: 2}, 2110, true},
		{"nothing measured: the whole history is estimated", longFirst, Measured{}, 2001, true},
		{"a measure of more messages than the history holds is not its measure", longFirst,
			Measured{Usage: llm.Usage{InputTokens: 100}, Through: 7}, 2001, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sizes []int64
			var first []llm.Message
			summary := llm.UserText("<context-summary>short</context-summary>")
			cfg := Config{
				Model: &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
					if first == nil {
						first = req.Messages
					}
					return llm.Reply(llm.Text("done")), nil
				}},
				Compact: func(_ context.Context, msgs []llm.Message, size llm.Usage) ([]llm.Message, *llm.Message, error) {
					sizes = append(sizes, size.Total())
					if size.Total() <= threshold {
						return msgs, nil, nil
					}
					return append([]llm.Message{summary}, msgs[1:]...), &summary, nil
				},
				Measured: tt.measured,
			}
			out, err := Run(t.Context(), cfg, tt.history)
			if err != nil {
				t.Fatal(err)
			}
			if len(sizes) != 1 || sizes[0] != tt.wantSize {
				t.Errorf("hook saw sizes %v before the first call, want [%d]", sizes, tt.wantSize)
			}
			if got := first[0].Text() == summary.Text(); got != tt.compacted {
				t.Errorf("first request compacted: %v, want %v", got, tt.compacted)
			}
			// The run's own response measures the history it returns.
			want := Measured{Usage: llm.Usage{}, Through: len(out.Messages)}
			if diff := cmp.Diff(want, out.Measured); diff != "" {
				t.Errorf("Outcome.Measured (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutcomeMeasured: the outcome's measure is always one of its own
// Messages — the newest response's, the one the run was given when it made
// no call, none when a compaction replaced the messages measured.
func TestOutcomeMeasured(t *testing.T) {
	history := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("ok")}}, llm.UserText("go on")}
	given := Measured{Usage: llm.Usage{InputTokens: 50, OutputTokens: 5}, Through: 2}
	summary := llm.UserText("<context-summary>short</context-summary>")
	compactAll := func(_ context.Context, msgs []llm.Message, _ llm.Usage) ([]llm.Message, *llm.Message, error) {
		return append([]llm.Message{summary}, msgs[1:]...), &summary, nil
	}
	keep := func(_ context.Context, msgs []llm.Message, _ llm.Usage) ([]llm.Message, *llm.Message, error) {
		return msgs, nil, nil
	}
	failing := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, errors.New("overloaded")
	}}
	var reqs [][]llm.Message
	tests := []struct {
		name    string
		model   llm.Model
		compact func(context.Context, []llm.Message, llm.Usage) ([]llm.Message, *llm.Message, error)
		want    func(out *Outcome) Measured
	}{
		{"calls made: the newest response's", toolTurns(2, &reqs), keep, func(out *Outcome) Measured {
			return Measured{Usage: llm.Usage{InputTokens: 300, OutputTokens: 1}, Through: len(out.Messages)}
		}},
		{"no call made: the one given", failing, keep, func(*Outcome) Measured { return given }},
		{"compacted, then no call: none", failing, compactAll, func(*Outcome) Measured { return Measured{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs = nil
			cfg := Config{Model: tt.model, Tools: set(t, echo("echo", true, nil)), Compact: tt.compact, Measured: given}
			out, _ := Run(t.Context(), cfg, history)
			if diff := cmp.Diff(tt.want(out), out.Measured); diff != "" {
				t.Errorf("Outcome.Measured (-want +got):\n%s", diff)
			}
		})
	}
}

// TestATurnCopiesTheHistoryOnce: a conversation answering notifications
// runs the loop once per batch, and each copy of its history is a copy per
// turn of everything said so far — quadratic over 10,000 children (1,548
// turns, 980 MB). A turn copies it once, for the request that carries the
// per-turn context: the loop appends to the history it is given (its
// caller owns the room past its length), and the request a fork would
// start from is built only for a turn that runs tools.
func TestATurnCopiesTheHistoryOnce(t *testing.T) {
	const n = 100_000
	history := make([]llm.Message, n, n+16)
	for i := range history {
		history[i] = llm.UserText("x")
		if i%2 == 1 {
			history[i].Role = llm.RoleAssistant
		}
	}
	history[n-1] = llm.UserText("answer this")
	for _, tc := range []struct {
		name     string
		preamble []llm.Block
	}{{"reminder", nil}, {"reminder and preamble", []llm.Block{llm.Text("PROJECT RULES")}}} {
		t.Run(tc.name, func(t *testing.T) {
			var last *llm.Request
			cfg := Config{
				Model: &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
					last = req
					return llm.Reply(llm.Text("done")), nil
				}},
				SystemContext: func(context.Context) string { return "2 tasks running" },
				Preamble:      tc.preamble,
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			out, err := Run(context.Background(), cfg, history)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			copyBytes := uint64(n) * uint64(unsafe.Sizeof(llm.Message{}))
			if got := after.TotalAlloc - before.TotalAlloc; got >= 2*copyBytes {
				t.Errorf("one turn on %d messages allocated %d bytes, %.1f copies of the history; want one", n, got, float64(got)/float64(copyBytes))
			}
			// What was sent and what was kept are still right.
			if len(out.Messages) != n+1 || out.Messages[n].Text() != "done" || out.Messages[n-1].Text() != "answer this" || len(out.Messages[n-1].Content) != 1 {
				t.Errorf("the history after the turn: %d messages, last %+v, before it %+v", len(out.Messages), out.Messages[len(out.Messages)-1], out.Messages[n-1])
			}
			sent := last.Messages[len(last.Messages)-1]
			if sent.Content[len(sent.Content)-1].Text != "<system-reminder>\n2 tasks running\n</system-reminder>" {
				t.Errorf("the request's last message: %+v", sent)
			}
			if len(history[n-1].Content) != 1 {
				t.Errorf("the caller's history was changed: %+v", history[n-1])
			}
		})
	}
}
