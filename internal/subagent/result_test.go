package subagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

var errBoom = &llm.Error{Kind: llm.ErrServer, Message: "boom"}

// childID is the child session id a claude result reports.
func childID(t *testing.T, res tool.Result) string {
	t.Helper()
	m, ok := res.Meta.(map[string]any)
	if !ok {
		t.Fatalf("result Meta is %T, want a map; result: %s", res.Meta, resultText(res))
	}
	id, _ := m["agentId"].(string)
	if id == "" {
		t.Fatalf("result Meta has no agentId: %v", m)
	}
	return id
}

// framed is a child's text as the parent's Agent result shows it: after
// the preamble that it carries no user authority (frame.go).
func framed(text string) string { return untrustedNote + "\n\n" + text }

func trailer(id string, tokens int64, toolUses int) string {
	return fmt.Sprintf("\n\n<task_metadata>session_id: %s</task_metadata>\n<usage>agentId: %s\ntotal_tokens: %d\ntool_uses: %d\nduration_ms: 0</usage>", id, id, tokens, toolUses)
}

// TestClaudeResult checks S-L1's completed result: the child's final text,
// the continuation trailer with usage, and the Meta front ends read.
func TestClaudeResult(t *testing.T) {
	h := newHarness(t, setup{script: func(context.Context, string, *llm.Request) (*llm.Response, error) {
		return reply("  child says hi\n"), nil
	}})
	c := h.mainCaller()
	res := h.mustCall(c, "toolu_1", AgentInput{Description: "greet", Prompt: "say hi"})
	if res.IsError {
		t.Fatalf("spawn failed: %s", resultText(res))
	}
	id := childID(t, res)
	if d := cmp.Diff(framed("child says hi")+trailer(id, 15, 0), resultText(res)); d != "" {
		t.Errorf("result text (-want +got):\n%s", d)
	}
	const cost = (10*1 + 5*2) / 1e6
	wantMeta := map[string]any{
		"status": "completed", "agentId": id, "sessionId": id, "agentType": "general-purpose",
		"prompt": "say hi", "content": []llm.Block{llm.Text("child says hi")},
		"totalDurationMs": int64(0), "totalTokens": int64(15), "totalToolUseCount": 0,
		"usage": llm.Usage{InputTokens: 10, OutputTokens: 5}, "totalCostUsd": llm.USD(cost),
	}
	if d := cmp.Diff(wantMeta, res.Meta); d != "" {
		t.Errorf("Meta (-want +got):\n%s", d)
	}
	usage, gotCost, _ := c.Totals.Snapshot()
	if usage != (llm.Usage{InputTokens: 10, OutputTokens: 5}) || gotCost != llm.USD(cost) {
		t.Errorf("caller's totals = %+v %v, want the child's usage and $%g", usage, gotCost, cost)
	}
	info, err := h.mem.GetSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != session.StatusCompleted || info.NumTurns != 1 {
		t.Errorf("child session status %s turns %d, want completed after 1 turn", info.Status, info.NumTurns)
	}
}

// TestClaudeResultEndings checks S-L3 and the turn limit: what the parent
// is told when the child does not finish normally.
func TestClaudeResultEndings(t *testing.T) {
	readCall := use("toolu_r", "Read", fakeIn{FilePath: "a.go"})
	tests := []struct {
		name       string
		front      string
		replies    []func() (*llm.Response, error) // by turn
		wantError  bool
		wantText   string // before the trailer; %s is the session id
		wantTokens int64
		wantUses   int
		wantStatus session.Status
	}{
		{
			name: "partial output after an error",
			replies: []func() (*llm.Response, error){
				func() (*llm.Response, error) { return replyBlocks(llm.Text("partial findings"), readCall), nil },
				func() (*llm.Response, error) { return nil, errBoom },
			},
			wantText:   "partial findings\n\n(The agent stopped before finishing: model: server: boom. Its output so far is above.)",
			wantTokens: 15, wantUses: 1, wantStatus: session.StatusFailed,
		},
		{
			name:       "an error before any text",
			replies:    []func() (*llm.Response, error){func() (*llm.Response, error) { return nil, errBoom }},
			wantError:  true,
			wantText:   "Agent \"worker\" failed: model: server: boom\n(session_id: %s)",
			wantStatus: session.StatusFailed,
		},
		{
			name:  "the turn limit",
			front: "maxTurns: 1\n",
			replies: []func() (*llm.Response, error){
				func() (*llm.Response, error) { return replyBlocks(llm.Text("looked at a.go"), readCall), nil },
			},
			wantText:   "looked at a.go\n\n(The agent reached its turn limit (1) before finishing. Its output so far is above.)",
			wantTokens: 15, wantUses: 1, wantStatus: session.StatusCompleted,
		},
		{
			name: "no final message",
			replies: []func() (*llm.Response, error){
				func() (*llm.Response, error) { return replyBlocks(readCall), nil },
				func() (*llm.Response, error) { return replyBlocks(), nil },
			},
			wantText:   "(The agent finished without a final message.)",
			wantTokens: 30, wantUses: 1, wantStatus: session.StatusCompleted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{
				agents: map[string]string{"worker": agentFile("worker", "Works", tt.front, "Work.")},
				script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
					n := turn(req)
					if n >= len(tt.replies) {
						return nil, fmt.Errorf("unexpected turn %d", n)
					}
					return tt.replies[n]()
				},
			})
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "work", Prompt: "go", SubagentType: "worker"})
			list, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID})
			if len(list) != 1 {
				t.Fatalf("%d child sessions, want 1", len(list))
			}
			id := list[0].ID
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.wantError)
			}
			want := strings.ReplaceAll(tt.wantText, "%s", id)
			if !tt.wantError {
				want = framed(want) + trailer(id, tt.wantTokens, tt.wantUses)
			}
			if d := cmp.Diff(want, resultText(res)); d != "" {
				t.Errorf("result text (-want +got):\n%s", d)
			}
			if list[0].Status != tt.wantStatus {
				t.Errorf("child session status %s, want %s", list[0].Status, tt.wantStatus)
			}
		})
	}
}

// TestCancellation checks S-L3: cancelling the parent's turn while the
// child's model is working stops the child and is returned as an error,
// not as a result the model would read.
func TestCancellation(t *testing.T) {
	for _, surface := range []string{"claude", "opencode"} {
		t.Run(surface, func(t *testing.T) {
			inside := make(chan struct{})
			h := newHarness(t, setup{
				subagents: config.Subagents{Surface: surface},
				script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
					close(inside)
					<-ctx.Done()
					return nil, ctx.Err()
				},
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type out struct {
				res tool.Result
				err error
			}
			done := make(chan out, 1)
			c := h.mainCaller()
			in := any(AgentInput{Description: "wait", Prompt: "wait forever"})
			if surface == "opencode" {
				in = TaskInput{Description: "wait", Prompt: "wait forever", SubagentType: "general-purpose"}
			}
			go func() {
				res, err := h.call(ctx, c, "toolu_1", in)
				done <- out{res, err}
			}()
			select {
			case <-inside:
			case <-time.After(waitFor):
				t.Fatal("the child's model was never called")
			}
			cancel()
			var o out
			select {
			case o = <-done:
			case <-time.After(waitFor):
				t.Fatal("the spawn call did not return after cancellation")
			}
			if !errors.Is(o.err, context.Canceled) {
				t.Errorf("spawn returned (%q, %v), want context.Canceled", resultText(o.res), o.err)
			}
			list, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID})
			if len(list) != 1 || list[0].Status != session.StatusKilled {
				t.Errorf("child sessions %+v, want one, killed", list)
			}
		})
	}
}

// TestOpenCodeResult checks the opencode surface's task output.
func TestOpenCodeResult(t *testing.T) {
	h := newHarness(t, setup{
		subagents: config.Subagents{Surface: "opencode"},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			switch p := firstUserText(req); {
			case p == "fail":
				return nil, errBoom
			case turn(req) == 0:
				return reply("first answer"), nil
			default:
				return reply(fmt.Sprintf("answer %d, having seen %d messages", turn(req)+1, len(req.Messages))), nil
			}
		},
	})
	c := h.mainCaller()
	res := h.mustCall(c, "toolu_1", TaskInput{Description: "ask", Prompt: "question", SubagentType: "general-purpose"})
	list, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID})
	if len(list) != 1 {
		t.Fatalf("%d child sessions, want 1", len(list))
	}
	id := list[0].ID
	want := fmt.Sprintf("<task id=%q state=\"completed\">\n<note>%s</note>\n<task_result>\nfirst answer\n</task_result>\n</task>", id, untrustedNote)
	if d := cmp.Diff(want, resultText(res)); d != "" || res.IsError {
		t.Errorf("task result (error %v) (-want +got):\n%s", res.IsError, d)
	}
	wantMeta := map[string]any{"status": "completed", "sessionId": id, "agentType": "general-purpose", "totalTokens": int64(15)}
	if d := cmp.Diff(wantMeta, res.Meta); d != "" {
		t.Errorf("Meta (-want +got):\n%s", d)
	}

	// task_id continues the child: its model sees the first exchange.
	res = h.mustCall(c, "toolu_2", TaskInput{Description: "ask", Prompt: "follow-up", SubagentType: "general-purpose", TaskID: id})
	want = fmt.Sprintf("<task id=%q state=\"completed\">\n<note>%s</note>\n<task_result>\nanswer 2, having seen 3 messages\n</task_result>\n</task>", id, untrustedNote)
	if d := cmp.Diff(want, resultText(res)); d != "" {
		t.Errorf("continued task result (-want +got):\n%s", d)
	}
	// session_id is task_id's alias.
	res = h.mustCall(c, "toolu_3", TaskInput{Description: "ask", Prompt: "again", SubagentType: "general-purpose", SessionID: id})
	if !strings.Contains(resultText(res), "answer 3, having seen 5 messages") {
		t.Errorf("session_id did not continue the task: %s", resultText(res))
	}
	if list, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID}); len(list) != 1 {
		t.Errorf("continuing made new sessions: %d children", len(list))
	}

	// A run that fails: the error form, with the child's id.
	res = h.mustCall(c, "toolu_4", TaskInput{Description: "ask", Prompt: "fail", SubagentType: "general-purpose"})
	list, _ = h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID})
	var failed string
	for _, s := range list {
		if s.Status == session.StatusFailed {
			failed = s.ID
		}
	}
	want = fmt.Sprintf("<task id=%q state=\"error\">\n<task_error>model: server: boom</task_error>\n</task>", failed)
	if d := cmp.Diff(want, resultText(res)); d != "" || !res.IsError {
		t.Errorf("failed task result (error %v) (-want +got):\n%s", res.IsError, d)
	}

	// A spawn refused before any session exists: no id, the text escaped.
	res = h.mustCall(c, "toolu_5", TaskInput{Description: "ask", Prompt: "p", SubagentType: "nope"})
	want = "<task id=\"\" state=\"error\">\n<task_error>unknown subagent_type &#34;nope&#34;; available agents: general-purpose</task_error>\n</task>"
	if d := cmp.Diff(want, resultText(res)); d != "" || !res.IsError {
		t.Errorf("refused task result (error %v) (-want +got):\n%s", res.IsError, d)
	}

	res = h.mustCall(c, "toolu_6", TaskInput{Description: "ask", Prompt: "p", SubagentType: "general-purpose", TaskID: id, SessionID: "other"})
	if !res.IsError || !strings.Contains(resultText(res), "disagree") {
		t.Errorf("task_id and session_id that disagree: %s", resultText(res))
	}
}
