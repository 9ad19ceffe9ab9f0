package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustParse(t *testing.T, src string) *Model {
	t.Helper()
	m, err := Parse("demo.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

// run drains a stream, returning every event before the first error.
func run(ctx context.Context, m *Model, req *llm.Request) ([]llm.Event, error) {
	var evs []llm.Event
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func respond(t *testing.T, m *Model, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := llm.Collect(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return resp
}

func llmErr(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

// conversation returns messages with n completed turns: each an assistant
// answer followed by a user message with a tool result.
func conversation(prompt string, n int) []llm.Message {
	msgs := []llm.Message{llm.UserText(prompt)}
	for i := range n {
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse(id, "Read", nil)}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(id, fmt.Sprintf("result %d", i), false)}},
		)
	}
	return msgs
}

func TestLoadDemo(t *testing.T) {
	m, err := Load("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Name(), "script:testdata/demo.yaml"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	var _ llm.Model = m
	resp := respond(t, m, &llm.Request{Messages: conversation("hi", 0)})
	if resp.Model != "scripted-demo" {
		t.Errorf("Model = %q, want scripted-demo", resp.Model)
	}
	if _, err := Load("testdata/missing.yaml"); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load of a missing file: %v, want an error naming it", err)
	}
}

func TestDefaultModelName(t *testing.T) {
	m := mustParse(t, "agents: {main: [{text: hi}]}")
	if got := respond(t, m, &llm.Request{}).Model; got != "scripted" {
		t.Errorf("Model = %q, want scripted", got)
	}
}

const turnsScenario = `
agents:
  main:
    - text: first
    - text: second
    - text: third
  reviewer:
    - text: review one
    - text: review two
  "*":
    - text: "fallback for {{.Agent}}"
`

func TestTurnSelection(t *testing.T) {
	m := mustParse(t, turnsScenario)
	tests := []struct {
		name  string
		agent string
		msgs  []llm.Message
		want  string
	}{
		{"no assistant messages", "main", conversation("go", 0), "first"},
		{"one assistant message", "main", conversation("go", 1), "second"},
		{"two assistant messages", "main", conversation("go", 2), "third"},
		{"empty agent is main", "", conversation("go", 1), "second"},
		{"subagent by name", "reviewer", conversation("go", 1), "review two"},
		{"unknown agent falls back to *", "explorer", conversation("go", 0), "fallback for explorer"},
		{"resumed history counts assistant messages only", "main", []llm.Message{
			llm.UserText("a"), llm.UserText("b"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("x")}},
			llm.UserText("c"),
		}, "second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := respond(t, m, &llm.Request{Agent: tt.agent, Messages: tt.msgs})
			if got := resp.Message.Text(); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	withFallback := mustParse(t, turnsScenario)
	noFallback := mustParse(t, "agents: {main: [{text: a}], reviewer: [{text: b}, {text: c}]}")
	tests := []struct {
		name  string
		m     *Model
		agent string
		turns int
		want  string
	}{
		{"out of turns", noFallback, "reviewer", 2,
			`script: bad_request: scenario demo.yaml: agent "reviewer" has no turn 3 (it scripts 2)`},
		{"main out of turns", noFallback, "", 1,
			`script: bad_request: scenario demo.yaml: agent "main" has no turn 2 (it scripts 1)`},
		{"fallback out of turns", withFallback, "explorer", 1,
			`script: bad_request: scenario demo.yaml: agent "explorer" (scripted by "*") has no turn 2 (it scripts 1)`},
		{"unknown agent without fallback", noFallback, "explorer", 0,
			`script: bad_request: scenario demo.yaml: no script for agent "explorer" and no "*" fallback (it scripts "main", "reviewer")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(context.Background(), tt.m, &llm.Request{Agent: tt.agent, Messages: conversation("go", tt.turns)})
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
			if e := llmErr(t, err); e.Kind != llm.ErrBadRequest || llm.Retryable(err) {
				t.Errorf("kind %s, retryable %v; want bad_request, not retryable", e.Kind, llm.Retryable(err))
			}
		})
	}
}

func TestTemplates(t *testing.T) {
	m := mustParse(t, `
agents:
  "*":
    - text: "{{.Prompt}}|{{.LastUserText}}|{{.LastToolResult}}|{{.Agent}}|{{.Turn}}"
      thinking: "thinking about {{.Prompt}}"
    - text: "{{.Prompt}}|{{.LastUserText}}|{{.LastToolResult}}|{{.Agent}}|{{.Turn}}"
    - text: "{{.Prompt}}|{{.LastUserText}}|{{.LastToolResult}}|{{.Agent}}|{{$.Turn}}"
`)
	twoResults := conversation("fix it", 1)
	twoResults[2].Content = append(twoResults[2].Content, llm.ToolResult("b", "newest", false))
	withText := conversation("fix it", 2)
	withText[4].Content = append(withText[4].Content, llm.Text("also this"))
	tests := []struct {
		name  string
		agent string
		msgs  []llm.Message
		want  string
	}{
		{"first turn", "main", conversation("fix it", 0), "fix it|fix it||main|1"},
		{"tool-result-only user message is not user text", "reviewer", conversation("fix it", 1), "fix it|fix it|result 0|reviewer|2"},
		{"newest tool result wins", "main", twoResults, "fix it|fix it|newest|main|2"},
		{"last user text", "main", withText, "fix it|also this|result 1|main|3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := respond(t, m, &llm.Request{Agent: tt.agent, Messages: tt.msgs})
			if got := resp.Message.Text(); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	all := mustParse(t, `
agents:
  main:
    - text: "{{range $i, $r := .ToolResults}}{{if $i}}+{{end}}{{$r}}{{end}}"
`)
	if got := respond(t, all, &llm.Request{Messages: twoResults[:1]}).Message.Text(); got != "" {
		t.Errorf("ToolResults before any tool = %q", got)
	}
	// ToolResults are those of the newest tool turn only, in call order.
	two := conversation("fix it", 1)
	two[2].Content = append(two[2].Content, llm.ToolResult("b", "second", false))
	all2 := mustParse(t, `
agents:
  main:
    - text: "unused"
    - text: "{{range $i, $r := .ToolResults}}{{if $i}}+{{end}}{{$r}}{{end}}"
`)
	if got := respond(t, all2, &llm.Request{Messages: two}).Message.Text(); got != "result 0+second" {
		t.Errorf("ToolResults = %q", got)
	}
	resp := respond(t, m, &llm.Request{Messages: conversation("fix it", 0)})
	if got := resp.Message.Content[0].Thinking; got != "thinking about fix it" {
		t.Errorf("thinking = %q", got)
	}
}

func TestToolInputTemplates(t *testing.T) {
	m := mustParse(t, `
agents:
  main:
    - tool_use:
        - name: Bash
          input:
            command: "grep {{.Prompt}} src/ && echo <done>"
            timeout: 5000
            nested: {list: [a, "{{.Agent}}", 2, true, null], ratio: 0.5}
            plain: "no template"
        - name: LS
        - name: Glob
          input:
`)
	resp := respond(t, m, &llm.Request{Messages: conversation("TODO", 0)})
	uses := resp.Message.ToolUses()
	var got []string
	for _, u := range uses {
		got = append(got, u.Name+" "+string(u.Input))
	}
	want := []string{
		`Bash {"command":"grep TODO src/ && echo <done>","timeout":5000,"nested":{"list":["a","main",2,true,null],"ratio":0.5},"plain":"no template"}`,
		`LS {}`,
		`Glob {}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool uses (-want +got):\n%s", diff)
	}
	for _, u := range uses {
		if !json.Valid(u.Input) {
			t.Errorf("%s input is not JSON: %s", u.Name, u.Input)
		}
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %q, want tool_use", resp.StopReason)
	}
}

func TestStreamEvents(t *testing.T) {
	m := mustParse(t, `
model: demo-model
agents:
  main:
    - thinking: "Check style first."
      text: "Let me look."
      tool_use:
        - {name: Read, input: {file_path: a.go}}
        - {name: Grep, input: {pattern: TODO}}
    - text: "All done."
`)
	evs, err := run(context.Background(), m, &llm.Request{Messages: conversation("go", 0)})
	if err != nil {
		t.Fatal(err)
	}
	done := evs[len(evs)-1]
	resp := done.Response
	if done.Type != llm.EventDone || resp == nil {
		t.Fatalf("last event %+v, want done with a response", done)
	}
	uses := resp.Message.ToolUses()
	want := []llm.Event{
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "Check "},
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "style "},
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "first."},
		{Type: llm.EventTextDelta, Index: 1, Delta: "Let "},
		{Type: llm.EventTextDelta, Index: 1, Delta: "me "},
		{Type: llm.EventTextDelta, Index: 1, Delta: "look."},
		{Type: llm.EventToolUseStart, Index: 2, ID: uses[0].ID, Name: "Read"},
		{Type: llm.EventToolUseStart, Index: 3, ID: uses[1].ID, Name: "Grep"},
		{Type: llm.EventDone, Response: resp},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantMsg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockThinking, Thinking: "Check style first."},
		llm.Text("Let me look."),
		llm.ToolUse(uses[0].ID, "Read", json.RawMessage(`{"file_path":"a.go"}`)),
		llm.ToolUse(uses[1].ID, "Grep", json.RawMessage(`{"pattern":"TODO"}`)),
	}}
	if diff := cmp.Diff(wantMsg, resp.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if resp.Model != "demo-model" || resp.StopReason != llm.StopToolUse || !strings.HasPrefix(resp.ID, "msg_script_") {
		t.Errorf("response model %q, stop %q, id %q", resp.Model, resp.StopReason, resp.ID)
	}
	resp = respond(t, m, &llm.Request{Messages: conversation("go", 1)})
	if resp.StopReason != llm.StopEndTurn {
		t.Errorf("text-only stop reason %q, want end_turn", resp.StopReason)
	}
}

func TestChunksJoinBack(t *testing.T) {
	for _, s := range []string{"", "one", "  lead and trail  ", "multi\nline\n\ttext", "héllo wörld"} {
		parts := chunks(s)
		if got := strings.Join(parts, ""); got != s {
			t.Errorf("chunks(%q) joins to %q", s, got)
		}
	}
}

func TestTransientFailure(t *testing.T) {
	m := mustParse(t, `
agents:
  reviewer:
    - text: "first"
    - error: {kind: overloaded, message: "try later", times: 2, retry_after: 1s}
      text: "recovered"
`)
	req := func(prompt string) *llm.Request {
		return &llm.Request{Agent: "reviewer", Messages: conversation(prompt, 1)}
	}
	for attempt := 1; attempt <= 2; attempt++ {
		_, err := run(context.Background(), m, req("review a.go"))
		e := llmErr(t, err)
		want := &llm.Error{Kind: llm.ErrOverloaded, Provider: "script", Message: "try later", RetryAfter: time.Second}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("attempt %d (-want +got):\n%s", attempt, diff)
		}
		if !llm.Retryable(err) {
			t.Errorf("attempt %d: not retryable", attempt)
		}
	}
	if got := respond(t, m, req("review a.go")).Message.Text(); got != "recovered" {
		t.Errorf("third attempt text %q, want recovered", got)
	}
	if got := respond(t, m, req("review a.go")).Message.Text(); got != "recovered" {
		t.Errorf("fourth attempt text %q, want recovered", got)
	}
	// Another conversation (a different prompt) counts its own attempts.
	if _, err := run(context.Background(), m, req("review b.go")); err == nil {
		t.Error("other conversation: first attempt succeeded, want a failure")
	}
}

func TestDefaultTimesAndMessage(t *testing.T) {
	m := mustParse(t, "agents: {main: [{error: {kind: rate_limit}, text: ok}]}")
	_, err := run(context.Background(), m, &llm.Request{Messages: conversation("x", 0)})
	if e := llmErr(t, err); e.Kind != llm.ErrRateLimit || e.Message != "scripted rate_limit failure" {
		t.Errorf("error %+v", e)
	}
	if got := respond(t, m, &llm.Request{Messages: conversation("x", 0)}).Message.Text(); got != "ok" {
		t.Errorf("second attempt %q, want ok", got)
	}
}

func TestPermanentFailure(t *testing.T) {
	tests := []struct {
		kind llm.ErrorKind
	}{{llm.ErrRateLimit}, {llm.ErrOverloaded}, {llm.ErrServer}, {llm.ErrAuth}, {llm.ErrBadRequest}}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			m := mustParse(t, fmt.Sprintf("agents: {main: [{error: {kind: %s, message: nope}}]}", tt.kind))
			for attempt := range 5 {
				evs, err := run(context.Background(), m, &llm.Request{Messages: conversation("x", 0)})
				if e := llmErr(t, err); e.Kind != tt.kind || e.Message != "nope" {
					t.Fatalf("attempt %d: %+v", attempt, e)
				}
				if len(evs) != 0 {
					t.Errorf("attempt %d: events before the error: %v", attempt, evs)
				}
			}
		})
	}
}

func TestStreamCut(t *testing.T) {
	m := mustParse(t, `
agents:
  main:
    - error: {kind: stream_cut, message: "connection reset"}
      text: "one two three four"
  bare:
    - error: {kind: stream_cut}
`)
	evs, err := run(context.Background(), m, &llm.Request{Messages: conversation("x", 0)})
	if e := llmErr(t, err); e.Kind != llm.ErrStreamCut || e.Message != "connection reset" || !llm.Retryable(err) {
		t.Fatalf("error %+v, want a retryable stream_cut", e)
	}
	want := []llm.Event{
		{Type: llm.EventTextDelta, Delta: "one "},
		{Type: llm.EventTextDelta, Delta: "two "},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events before the cut (-want +got):\n%s", diff)
	}
	// The retry answers in full.
	if got := respond(t, m, &llm.Request{Messages: conversation("x", 0)}).Message.Text(); got != "one two three four" {
		t.Errorf("retry text %q", got)
	}
	// A permanent cut with no text still streams something first.
	evs, err = run(context.Background(), m, &llm.Request{Agent: "bare", Messages: conversation("x", 0)})
	if e := llmErr(t, err); e.Kind != llm.ErrStreamCut || len(evs) == 0 || evs[0].Type != llm.EventTextDelta {
		t.Errorf("bare cut: events %v, error %+v", evs, e)
	}
}

func TestDelay(t *testing.T) {
	m := mustParse(t, `
agents:
  slow: [{text: late, delay: 1h}]
  quick: [{text: soon, delay: 1ms}]
`)
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		_, err := run(ctx, m, &llm.Request{Agent: "slow"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("returned after %v", d)
		}
	})
	t.Run("cancelled during", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := run(ctx, m, &llm.Request{Agent: "slow"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("returned after %v", d)
		}
	})
	t.Run("waits then answers", func(t *testing.T) {
		if got := respond(t, m, &llm.Request{Agent: "quick"}).Message.Text(); got != "soon" {
			t.Errorf("text %q", got)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	m := mustParse(t, "agents: {main: [{text: one two three four five}]}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deltas int
	var gotErr error
	for ev, err := range m.Stream(ctx, &llm.Request{}) {
		if err != nil {
			gotErr = err
			break
		}
		if ev.Type == llm.EventTextDelta {
			deltas++
			cancel()
		}
	}
	if deltas != 1 || !errors.Is(gotErr, context.Canceled) {
		t.Errorf("deltas %d, error %v; want 1 delta then context.Canceled", deltas, gotErr)
	}
}

func TestConsumerStops(t *testing.T) {
	m := mustParse(t, "agents: {main: [{thinking: a b c, text: d e f, tool_use: [{name: X}]}]}")
	for stopAfter := 1; stopAfter <= 7; stopAfter++ {
		n := 0
		// A stream that yields after the consumer stopped panics here.
		for range m.Stream(context.Background(), &llm.Request{}) {
			n++
			if n == stopAfter {
				break
			}
		}
		if n != stopAfter {
			t.Errorf("stopAfter %d: got %d events", stopAfter, n)
		}
	}
}

func TestConcurrentStreams(t *testing.T) {
	m := mustParse(t, `
agents:
  worker:
    - error: {kind: server, times: 3}
      text: "done"
      tool_use: [{name: Read, input: {file_path: "{{.Prompt}}"}}]
`)
	const n = 40
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures int
		ids      = map[string]bool{}
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := llm.Collect(m.Stream(context.Background(), &llm.Request{Agent: "worker", Messages: conversation("same", 0)}))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures++
				return
			}
			for _, u := range resp.Message.ToolUses() {
				ids[u.ID] = true
			}
		}()
	}
	wg.Wait()
	if failures != 3 {
		t.Errorf("%d failures, want exactly 3", failures)
	}
	if len(ids) != n-3 {
		t.Errorf("%d distinct tool ids over %d answers", len(ids), n-3)
	}
}

func TestUniqueIDs(t *testing.T) {
	m := mustParse(t, "agents: {main: [{tool_use: [{name: A}, {name: B}, {name: C}]}]}")
	toolIDs, msgIDs := map[string]bool{}, map[string]bool{}
	for range 100 {
		resp := respond(t, m, &llm.Request{})
		if msgIDs[resp.ID] || !strings.HasPrefix(resp.ID, "msg_script_") {
			t.Fatalf("message id %q repeated or malformed", resp.ID)
		}
		msgIDs[resp.ID] = true
		for _, u := range resp.Message.ToolUses() {
			if toolIDs[u.ID] || !strings.HasPrefix(u.ID, "toolu_") {
				t.Fatalf("tool id %q repeated or malformed", u.ID)
			}
			toolIDs[u.ID] = true
		}
	}
}

func TestUsage(t *testing.T) {
	m := mustParse(t, `
agents:
  given:
    - text: hi
      usage: {input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 7, cache_creation_input_tokens: 3}
  partial:
    - text: hi
      usage: {cache_read_input_tokens: 500}
  estimated:
    - text: "12345678"
      tool_use: [{name: Read, input: {p: x}}]
  tiny:
    - text: "a"
`)
	system := strings.Repeat("s", 40)
	msgs := []llm.Message{
		llm.UserText(strings.Repeat("u", 20)), // 20
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t1", "Read", json.RawMessage(`{"a":1}`))}}, // 4 + 7
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", strings.Repeat("r", 9), false)}},        // 9
	}
	// The estimated agent's history has one assistant message, so give it a
	// second turn by repeating its first.
	m.agents["estimated"] = append(m.agents["estimated"], m.agents["estimated"][0])
	tests := []struct {
		agent  string
		system string
		msgs   []llm.Message
		want   llm.Usage
	}{
		{"given", "", nil, llm.Usage{InputTokens: 1200, OutputTokens: 40, CacheReadInputTokens: 7, CacheCreationInputTokens: 3}},
		{"partial", "", nil, llm.Usage{CacheReadInputTokens: 500}},
		// input (40+20+11+9)/4 = 20; output "12345678" + "Read" + `{"p":"x"}` = 21/4 = 5
		{"estimated", system, msgs, llm.Usage{InputTokens: 20, OutputTokens: 5}},
		{"tiny", "", nil, llm.Usage{InputTokens: 1, OutputTokens: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			resp := respond(t, m, &llm.Request{Agent: tt.agent, System: tt.system, Messages: tt.msgs})
			if diff := cmp.Diff(tt.want, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must appear in the error
	}{
		{"unknown turn key", `agents:
  main:
    - text: a
    - text: b
      tool_uses: []
`, []string{`demo.yaml:5: turn 2 of the agent at line 2: unknown key (did you mean tool_use?)`}},
		{"unknown top-level key", "modle: x\nagents: {main: [{text: a}]}\n",
			[]string{`demo.yaml:1: unknown key (did you mean model?)`}},
		{"unknown key far from any", "agents: {main: [{text: a, colour: red}]}\n",
			[]string{`demo.yaml:1: turn 1 of the agent at line 1: unknown key (want one of text, thinking, tool_use, usage, delay, error, choose, repeat)`}},
		{"duplicate key", "agents:\n  main:\n    - text: a\n      text: b\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: key "text" given twice`}},
		{"empty turn", "agents:\n  main:\n    - text: a\n    - {}\n",
			[]string{`demo.yaml:4: turn 2 of the agent at line 2: the turn has nothing in it`}},
		{"turn with only usage", "agents:\n  main:\n    - usage: {input_tokens: 1}\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: the turn has nothing in it`}},
		{"tool without a name", "agents:\n  main:\n    - tool_use:\n        - input: {a: 1}\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: tool_use 1: missing name`}},
		{"unknown tool key", "agents:\n  main:\n    - tool_use:\n        - name: Read\n          args: {a: 1}\n",
			[]string{`demo.yaml:5: turn 1 of the agent at line 2: tool_use 1: unknown key (want one of name, input)`}},
		{"tool_use not a list", "agents:\n  main:\n    - tool_use: {name: Read}\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: tool_use must be a list`}},
		{"input not a mapping", "agents:\n  main:\n    - tool_use:\n        - name: Read\n          input: [a, b]\n",
			[]string{`demo.yaml:5: turn 1 of the agent at line 2: tool_use 1: input must be a mapping, got a list`}},
		{"bad delay", "agents:\n  main:\n    - text: a\n      delay: soon\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: delay: not a duration`}},
		{"negative delay", "agents:\n  main:\n    - text: a\n      delay: -1s\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: delay: not a duration`}},
		{"bad retry_after", "agents:\n  main:\n    - text: a\n      error:\n        kind: server\n        retry_after: 5\n",
			[]string{`demo.yaml:6: turn 1 of the agent at line 2: error: retry_after: not a duration`}},
		{"unknown error kind", "agents:\n  main:\n    - error:\n        kind: teapot\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: error: unknown kind (want one of rate_limit, overloaded, server, stream_cut, auth, bad_request)`}},
		{"error without kind", "agents:\n  main:\n    - error: {message: x}\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: error: missing kind`}},
		{"bad times", "agents:\n  main:\n    - text: a\n      error: {kind: server, times: 0}\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: error: times must be an integer of at least 1, got a smaller one`}},
		{"times without an answer", "agents:\n  main:\n    - error: {kind: server, times: 2}\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: error: times is given but the turn has no text`}},
		{"bad usage", "agents:\n  main:\n    - text: a\n      usage: {input_tokens: many}\n",
			[]string{`demo.yaml:4: turn 1 of the agent at line 2: usage: input_tokens must be an integer of at least 0, got a string`}},
		{"template syntax", "agents:\n  main:\n    - text: a\n    - text: \"{{.Prompt\"\n",
			[]string{`demo.yaml:4: turn 2 of the agent at line 2: text: not a valid template (line 1:`}},
		{"template unknown field", "agents:\n  main:\n    - text: \"{{.Promt}}\"\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: text: a template field does not exist (did you mean .Prompt?)`}},
		{"template unknown field in a block", "agents:\n  main:\n    - text: \"{{if .Turn}}{{$.Nope}}{{end}}\"\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: text: a template field does not exist`}},
		{"template unknown function", "agents:\n  main:\n    - thinking: \"{{shout .Prompt}}\"\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: thinking: not a valid template (line 1: function … not defined)`}},
		{"template in tool input", "agents:\n  main:\n    - tool_use:\n        - name: Read\n          input:\n            path: \"{{.File}}\"\n",
			[]string{`demo.yaml:6: turn 1 of the agent at line 2: tool_use 1: input: a template field does not exist`}},
		{"empty agents", "agents: {}\n", []string{`demo.yaml:1: agents is empty`}},
		{"no agents key", "model: x\n", []string{`demo.yaml:1: no "agents" key`}},
		{"agent with no turns", "agents:\n  main: []\n", []string{`demo.yaml:2: the agent at line 2: no turns`}},
		{"agent not a list", "agents:\n  main: {text: a}\n", []string{`demo.yaml:2: the agent at line 2: want a list of turns, got a mapping`}},
		{"turn not a mapping", "agents:\n  main:\n    - hello\n", []string{`demo.yaml:3: turn 1 of the agent at line 2: want a mapping`}},
		{"empty file", "", []string{`demo.yaml: empty scenario`}},
		{"yaml syntax", "agents: [\n", []string{`demo.yaml:1: not valid YAML: `}},
		{"several problems at once", "agents:\n  main:\n    - txt: a\n    - text: b\n      delay: x\n",
			[]string{`demo.yaml:3: turn 1 of the agent at line 2: unknown key (did you mean text?)`, `demo.yaml:5: turn 2 of the agent at line 2: delay:`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func TestValidScenarios(t *testing.T) {
	// Forms that must load: aliases, null input, thinking-only turn, a
	// permanent failure, every error kind.
	srcs := []string{
		"agents: {main: [&t {text: a}, *t]}",
		"agents: {main: [{tool_use: [{name: Read, input: }]}]}",
		"agents: {main: [{thinking: hmm}]}",
		"agents: {main: [{error: {kind: auth}}]}",
		"agents: {main: [{text: a, error: {kind: rate_limit, times: 3, retry_after: 250ms}, delay: 0s}]}",
		"agents: {main: [{text: \"{{with .Prompt}}{{.}}{{end}} {{define \\\"x\\\"}}{{.Agent}}{{end}}{{template \\\"x\\\" .}}\"}]}",
	}
	for _, src := range srcs {
		if _, err := Parse("ok.yaml", []byte(src)); err != nil {
			t.Errorf("Parse(%s): %v", src, err)
		}
	}
}

func TestNilRequest(t *testing.T) {
	m := mustParse(t, "agents: {main: [{text: a}]}")
	_, err := run(context.Background(), m, nil)
	if e := llmErr(t, err); e.Kind != llm.ErrBadRequest {
		t.Errorf("kind %s", e.Kind)
	}
}

// TestErrorsNeverQuoteTheFile: a scenario path can name any file the
// process can read (/etc/passwd, a key file), so a problem names the file,
// the line and what was wrong, and never repeats what the file holds —
// not a value, not a key, not an agent name (issue 8, item 4). Only the
// scenario format's own words (known keys, kinds, template fields) appear.
func TestErrorsNeverQuoteTheFile(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must appear in the error
	}{
		{"a passwd file", "root:x:0:0:SECRET-ROOT:/root:/bin/bash\ndaemon:x:1:1:SECRET-D:/usr/sbin:/usr/sbin/nologin\n",
			[]string{"demo.yaml:1: want a mapping with keys model, agents, got a string"}},
		{"a shadow file", "SECRET-1:*:20228:0:99999:7::\nSECRET-2:*:20228:0:99999:7::\n",
			[]string{"demo.yaml:1: unknown key (want one of model, agents)", "demo.yaml:2: unknown key"}},
		{"a secret close to a known key", "agentz: SECRET\n", []string{"demo.yaml:1: unknown key (did you mean agents?)"}},
		{"a secret as the model", "model: [SECRET]\nagents: {main: [{text: a}]}\n", []string{"demo.yaml:1: model must be a string, got a list"}},
		{"a secret agent name", "agents:\n  SECRET-AGENT: SECRET-VALUE\n", []string{"demo.yaml:2: the agent at line 2: want a list of turns, got a string"}},
		{"a secret agent scripted twice", "agents:\n  SECRET-A: [{text: a}]\n  SECRET-A: [{text: b}]\n", []string{"demo.yaml:3: this agent is scripted twice (first at line 2)"}},
		{"a secret duration", "agents:\n  main:\n    - text: a\n      delay: SECRET\n", []string{"demo.yaml:4: turn 1 of the agent at line 2: delay: not a duration"}},
		{"a secret error kind", "agents:\n  main:\n    - error: {kind: SECRET}\n", []string{"demo.yaml:3: turn 1 of the agent at line 2: error: unknown kind (want one of rate_limit,"}},
		{"a secret count", "agents:\n  main:\n    - text: a\n      usage: {input_tokens: SECRET}\n", []string{"demo.yaml:4: turn 1 of the agent at line 2: usage: input_tokens must be an integer of at least 0, got a string"}},
		{"a secret template function", "agents:\n  main:\n    - text: \"{{SECRET .Prompt}}\"\n", []string{"demo.yaml:3: turn 1 of the agent at line 2: text: not a valid template"}},
		{"a secret template field", "agents:\n  main:\n    - text: \"{{.SECRET}}\"\n", []string{"demo.yaml:3: turn 1 of the agent at line 2: text: a template field does not exist"}},
		{"an unclosed secret template", "agents:\n  main:\n    - text: \"{{ \\\"SECRET }}\"\n", []string{"demo.yaml:3: turn 1 of the agent at line 2: text: not a valid template"}},
		{"a secret input key twice", "agents:\n  main:\n    - tool_use:\n        - name: Read\n          input: {SECRET: 1, SECRET: 2}\n",
			[]string{"demo.yaml:5: turn 1 of the agent at line 2: tool_use 1: input: a key is given twice"}},
		{"a secret tagged value", "agents:\n  main:\n    - tool_use:\n        - name: Read\n          input: {a: !!int SECRET}\n",
			[]string{"demo.yaml:5: turn 1 of the agent at line 2: tool_use 1: input: not a valid value for its tag !!int"}},
		{"a secret tag", "agents:\n  main:\n    - text: a\n      usage: {input_tokens: !SECRET 5}\n", []string{"demo.yaml:4: turn 1 of the agent at line 2: usage: input_tokens must be an integer of at least 0, got a scalar with a tag of its own"}},
		{"a secret anchor", "agents: *SECRET\n", []string{"demo.yaml: not valid YAML"}},
		{"secret YAML syntax", "agents: {main: [{text: a}]}\nSECRET: [\n", []string{"demo.yaml:2: not valid YAML: did not find expected node content"}},
		{"a known key twice", "agents:\n  main:\n    - text: SECRET\n      text: SECRET\n", []string{`demo.yaml:4: turn 1 of the agent at line 2: key "text" given twice`}},
		{"a secret retry_after", "agents:\n  main:\n    - text: a\n      error: {kind: server, retry_after: SECRET}\n", []string{"retry_after: not a duration"}},
		{"a secret times", "agents:\n  main:\n    - text: a\n      error: {kind: server, times: SECRET}\n", []string{"times must be an integer of at least 1, got a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error quotes the file:\n%s", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// TestLoadOnlyRegularFiles: a scenario path that names a device, a FIFO or
// a directory is refused before anything is read (reading /dev/zero would
// never end), and so is a file far larger than any scenario.
func TestLoadOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# SECRET\n"), maxScenarioBytes/9+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: not a regular file"},
		{dir, dir + ": not a regular file"},
		{big, big + ": larger than"},
	} {
		_, err := Load(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Load(%s) = %v, want an error containing %q", tt.path, err, tt.want)
		}
	}
}
