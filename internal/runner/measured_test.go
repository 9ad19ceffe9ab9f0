package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// measuring is a model whose every reply reports a context of 11 tokens,
// however long the conversation looks at four characters a token, and
// that counts the summary requests of compaction (agent "main:compact").
// Its replies to the agent are replies[n] for its n-th call, then "done".
type measuring struct {
	replies   []*llm.Response
	calls     int
	summaries atomic.Int32
}

func (m *measuring) model() *llm.ModelFunc {
	return &llm.ModelFunc{ID: "m", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if strings.HasSuffix(req.Agent, ":compact") {
			m.summaries.Add(1)
			r := llm.Reply(llm.Text("what happened"))
			r.Usage = llm.Usage{InputTokens: 5, OutputTokens: 1}
			return r, nil
		}
		r := llm.Reply(llm.Text("done"))
		if m.calls < len(m.replies) {
			c := *m.replies[m.calls]
			r = &c
		}
		m.calls++
		r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 1}
		return r, nil
	}}
}

// launches is a reply calling the launch tool n times, each input
// carrying a long description: the bulk of the conversation is in
// assistant messages, which the replies' usage measured.
func launches(n int) *llm.Response {
	var blocks []llm.Block
	for i := range n {
		in, _ := json.Marshal(map[string]string{"text": strings.Repeat("d", 400)})
		blocks = append(blocks, llm.ToolUse(fmt.Sprint("l", i), "launch", in))
	}
	return llm.Reply(blocks...)
}

func launchTools(t *testing.T) *tool.Set {
	t.Helper()
	launch := tool.New(tool.Info{Name: "launch", Description: "launch", Access: tool.AccessRead, ConcurrencySafe: true},
		func(context.Context, tool.Env, echoIn) (tool.Result, error) { return tool.Text("launched"), nil })
	s, err := tool.NewSet(launch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// blockOnce is a Stop hook that keeps the agent going once.
func blockOnce(t *testing.T) *runner.Hooks {
	t.Helper()
	e, err := hook.New(hook.Options{}, hook.Config{hook.Stop: {{Handlers: []hook.Handler{{Name: "callback", Run: func(_ context.Context, c hook.Call) (hook.Output, error) {
		if c.Input.StopHookActive {
			return hook.Output{}, nil
		}
		return hook.Output{Decision: "block", Reason: "check the results again"}, nil
	}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Hooks{Engine: e}
}

// TestLaterTurnsStartFromTheMeasuredContext: a conversation whose history
// estimates far over the compaction threshold, but which the model
// measured small, makes no summary request on its next run — a
// notification's turn through Drain, a message's turn, a Stop hook's
// continuation — while the messages added since are small.
func TestLaterTurnsStartFromTheMeasuredContext(t *testing.T) {
	long := llm.Reply(llm.Text(strings.Repeat("r", 8000))) // ~2,000 tokens estimated
	tests := []struct {
		name    string
		replies []*llm.Response
		hooks   bool
		// drive runs the turns after the first.
		drive func(t *testing.T, conv *runner.Conversation) *runner.Result
	}{
		{"a notification's turn (Drain)", []*llm.Response{long}, false, func(t *testing.T, conv *runner.Conversation) *runner.Result {
			return conv.Drain(t.Context(), []llm.Message{llm.UserText("go")}, &feed{inputs: [][]llm.Message{{llm.UserText("<task-notification>part 1 done</task-notification>")}}}, nil)
		}},
		{"a message's turn after many tool calls", []*llm.Response{launches(20)}, false, func(t *testing.T, conv *runner.Conversation) *runner.Result {
			if res := conv.Turn(t.Context(), llm.UserText("go")); res.Err != nil {
				return res
			}
			return conv.Turn(t.Context(), llm.UserText("one more thing"))
		}},
		{"a Stop hook's continuation", []*llm.Response{long}, true, func(t *testing.T, conv *runner.Conversation) *runner.Result {
			return conv.Turn(t.Context(), llm.UserText("go"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sess := newSession(t)
			m := &measuring{replies: tt.replies}
			a := runner.Agent{Name: "main", Model: m.model(), Tools: launchTools(t),
				Compaction: &compact.Config{Window: 1000, Threshold: 0.5, KeepRecent: 1}}
			var hooks *runner.Hooks
			if tt.hooks {
				hooks = blockOnce(t)
			}
			conv := runner.Start(runner.Spec{Session: sess, Loop: runner.LoopConfig(a), Hooks: hooks}, nil)
			res := tt.drive(t, conv)
			if err := conv.Close(""); err != nil {
				t.Fatal(err)
			}
			if res.Err != nil || len(res.Warnings) > 0 {
				t.Fatalf("last turn: %v, warnings %q", res.Err, res.Warnings)
			}
			if h := conv.History(); len(h) < 4 {
				t.Fatalf("history of %d messages, want at least two exchanges", len(h))
			}
			if n := m.summaries.Load(); n != 0 {
				t.Errorf("%d summary requests, want none: the context was measured at 11 tokens", n)
			}
		})
	}
}

// TestManualCompactionDropsTheMeasure: after /compact replaced the
// history, what the last reply measured no longer applies to it, and the
// next turn sizes the new history by estimate.
func TestManualCompactionDropsTheMeasure(t *testing.T) {
	long := llm.Reply(llm.Text(strings.Repeat("r", 8000)))
	_, sess := newSession(t)
	// The replies measure 11 tokens and the estimate says thousands: which
	// one the check used shows in whether the third turn compacts.
	m := &measuring{replies: []*llm.Response{long, long}}
	a := runner.Agent{Name: "main", Model: m.model(), Compaction: &compact.Config{Window: 1000, Threshold: 0.5, KeepRecent: 2}}
	conv := runner.Start(runner.Spec{Session: sess, Loop: runner.LoopConfig(a)}, nil)
	defer conv.Close("")
	for _, in := range []string{"go", "more"} {
		if res := conv.Turn(t.Context(), llm.UserText(in)); res.Err != nil || m.summaries.Load() != 0 {
			t.Fatalf("turn %q: %v, %d summaries", in, res.Err, m.summaries.Load())
		}
	}
	if n, err := conv.Compact(t.Context()); err != nil || n != 1 || m.summaries.Load() != 1 {
		t.Fatalf("Compact replaced %d messages (%v), %d summaries; want 1 and 1", n, err, m.summaries.Load())
	}
	if res := conv.Turn(t.Context(), llm.UserText("again")); res.Err != nil || len(res.Warnings) > 0 {
		t.Fatalf("third turn: %v %q", res.Err, res.Warnings)
	}
	if n := m.summaries.Load(); n != 2 {
		t.Errorf("%d summary requests, want 2: after the compaction the history is estimated whole", n)
	}
}
