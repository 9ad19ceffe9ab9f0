package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func newModel(t *testing.T, srv *testkit.AnthropicServer) *Model {
	t.Helper()
	m, err := New(Config{Model: "claude-test", APIKey: "test-key", BaseURL: srv.URL, Getenv: env(nil)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// run drains a stream and returns its events and final error.
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

func hello() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hello")}}
}

// streamed is what a consumer sees of a stream, deltas joined per block.
type streamed struct {
	Text, Thinking map[int]string
	ToolStarts     []llm.Event
	Done           *llm.Response
}

func summarize(t *testing.T, evs []llm.Event) streamed {
	t.Helper()
	s := streamed{Text: map[int]string{}, Thinking: map[int]string{}}
	for i, ev := range evs {
		if s.Done != nil {
			t.Fatalf("event %d (%s) after done", i, ev.Type)
		}
		switch ev.Type {
		case llm.EventTextDelta:
			s.Text[ev.Index] += ev.Delta
		case llm.EventThinkingDelta:
			s.Thinking[ev.Index] += ev.Delta
		case llm.EventToolUseStart:
			s.ToolStarts = append(s.ToolStarts, ev)
		case llm.EventDone:
			s.Done = ev.Response
		default:
			t.Fatalf("unexpected event type %q", ev.Type)
		}
	}
	if s.Done == nil {
		t.Fatal("stream ended without EventDone")
	}
	if !strings.HasPrefix(s.Done.ID, "msg_") {
		t.Errorf("response id %q, want msg_…", s.Done.ID)
	}
	s.Done.ID = ""
	return s
}

func TestStream(t *testing.T) {
	sig := func(r *llm.Response) string { // the fake's signature is opaque; take it from the reply
		for _, b := range r.Message.Content {
			if b.Type == llm.BlockThinking {
				return b.Signature
			}
		}
		return ""
	}
	tests := []struct {
		name  string
		reply testkit.Reply
		want  streamed
	}{
		{
			name:  "text",
			reply: testkit.Reply{Text: "Hello there, world", Usage: llm.Usage{InputTokens: 12, OutputTokens: 5}},
			want: streamed{
				Text: map[int]string{0: "Hello there, world"}, Thinking: map[int]string{},
				Done: &llm.Response{Model: "claude-test", StopReason: llm.StopEndTurn,
					Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Hello there, world")}},
					Usage:   llm.Usage{InputTokens: 12, OutputTokens: 5}},
			},
		},
		{
			name: "tool use with input assembled from deltas",
			reply: testkit.Reply{Text: "Reading.", ToolCalls: []testkit.ToolCall{
				{ID: "toolu_1", Name: "Read", Input: map[string]any{"path": "/tmp/a.go", "limit": 20}},
				{ID: "toolu_2", Name: "LS"},
			}},
			want: streamed{
				Text: map[int]string{0: "Reading."}, Thinking: map[int]string{},
				ToolStarts: []llm.Event{
					{Type: llm.EventToolUseStart, Index: 1, ID: "toolu_1", Name: "Read"},
					{Type: llm.EventToolUseStart, Index: 2, ID: "toolu_2", Name: "LS"},
				},
				Done: &llm.Response{Model: "claude-test", StopReason: llm.StopToolUse,
					Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
						llm.Text("Reading."),
						llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"limit":20,"path":"/tmp/a.go"}`)),
						llm.ToolUse("toolu_2", "LS", json.RawMessage(`{}`)),
					}}},
			},
		},
		{
			name:  "thinking then text",
			reply: testkit.Reply{Thinking: "The user greets me.", Text: "Hi!", StopReason: "max_tokens"},
			want: streamed{
				Text: map[int]string{1: "Hi!"}, Thinking: map[int]string{0: "The user greets me."},
				Done: &llm.Response{Model: "claude-test", StopReason: llm.StopMaxTokens,
					Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
						{Type: llm.BlockThinking, Thinking: "The user greets me.", Signature: "SIG"},
						llm.Text("Hi!"),
					}}},
			},
		},
		{
			name: "usage with cache tokens and model override",
			reply: testkit.Reply{Text: "cached", Model: "claude-test-20250101",
				Usage: llm.Usage{InputTokens: 3, OutputTokens: 9, CacheCreationInputTokens: 100, CacheReadInputTokens: 2000}},
			want: streamed{
				Text: map[int]string{0: "cached"}, Thinking: map[int]string{},
				Done: &llm.Response{Model: "claude-test-20250101", StopReason: llm.StopEndTurn,
					Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("cached")}},
					Usage:   llm.Usage{InputTokens: 3, OutputTokens: 9, CacheCreationInputTokens: 100, CacheReadInputTokens: 2000}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(tt.reply))
			evs, err := run(context.Background(), newModel(t, srv), hello())
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			got := summarize(t, evs)
			if s := sig(got.Done); s != "" {
				if s == "SIG" {
					t.Fatal("fake server sent a placeholder signature")
				}
				for i, b := range got.Done.Message.Content {
					if b.Type == llm.BlockThinking {
						got.Done.Message.Content[i].Signature = "SIG"
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTextArrivesInSeveralDeltas(t *testing.T) {
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "one two three four five"}))
	evs, err := run(context.Background(), newModel(t, srv), hello())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == llm.EventTextDelta {
			n++
		}
	}
	if n < 2 {
		t.Errorf("got %d text deltas, want them streamed one by one (several)", n)
	}
}

// bodyJSON decodes the JSON text s for comparison with a recorded body.
func bodyJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return m
}

func TestRequestBody(t *testing.T) {
	temp := 0.5
	req := &llm.Request{
		System: "You are terse.",
		Tools: []llm.ToolSpec{
			{Name: "Read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "LS", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		Messages: []llm.Message{
			llm.UserText("list and read"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "plan", Signature: "sig-1"},
				{Type: llm.BlockRedactedThinking, Data: "opaque"},
				llm.Text(""), // dropped: the API refuses empty text
				llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"x"}`)),
				llm.ToolUse("toolu_2", "LS", nil),
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.ToolResult("toolu_1", "no such file", true),
				{Type: llm.BlockToolResult, ToolUseID: "toolu_2", Content: []llm.Block{
					llm.Text("a.png"),
					{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
				}},
				{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
				llm.Text("go on"),
			}},
		},
		Temperature: &temp,
		Thinking:    &llm.Thinking{BudgetTokens: 2048},
	}
	want := bodyJSON(t, `{
		"model": "claude-test",
		"max_tokens": 8192,
		"stream": true,
		"thinking": {"type": "enabled", "budget_tokens": 2048},
		"system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
		"tools": [
			{"name": "Read", "description": "Read a file.", "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}},
			{"name": "LS", "input_schema": {"type":"object"}, "cache_control": {"type": "ephemeral"}}
		],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "list and read"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "plan", "signature": "sig-1"},
				{"type": "redacted_thinking", "data": "opaque"},
				{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "x"}},
				{"type": "tool_use", "id": "toolu_2", "name": "LS", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": "no such file"},
				{"type": "tool_result", "tool_use_id": "toolu_2", "content": [
					{"type": "text", "text": "a.png"},
					{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
				]},
				{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
				{"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}
			]}
		]
	}`)
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	if _, err := run(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	if diff := cmp.Diff(want, reqs[0].JSON()); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	// API version 2026-10-21 (anthropic-sdk-go v2): the key travels as a
	// bearer token, and sampling parameters (the request's temperature) are
	// not sent, since that version rejects them.
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("authorization = %q, want the key as a bearer token", got)
	}
	if got := reqs[0].Header.Get("Anthropic-Version"); got != "2026-10-21" {
		t.Errorf("anthropic-version = %q, want 2026-10-21", got)
	}
}

func TestCacheBreakpointSkipsThinking(t *testing.T) {
	// A last message ending in thinking (prefill) must put the breakpoint on
	// the block before it: thinking blocks cannot carry cache_control.
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("so"), {Type: llm.BlockThinking, Thinking: "t", Signature: "s"}}},
	}}
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	if _, err := run(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].JSON()["messages"].([]any)
	last := msgs[1].(map[string]any)["content"].([]any)
	if _, ok := last[0].(map[string]any)["cache_control"]; !ok {
		t.Errorf("no cache_control on the text block: %v", last)
	}
	if _, ok := last[1].(map[string]any)["cache_control"]; ok {
		t.Errorf("cache_control on a thinking block: %v", last)
	}
	if _, ok := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["cache_control"]; ok {
		t.Error("cache_control on a message other than the last")
	}
}

// TestCacheBreakpointBeforePerTurnContext: per-turn context ends the last
// message after its breakpoint, so the next call, which no longer carries
// it, shares everything up to there.
func TestCacheBreakpointBeforePerTurnContext(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult("toolu_1", "a.go", false),
		{Type: llm.BlockText, Text: "<system-reminder>\nnow\n</system-reminder>", PerTurn: true},
	}}}}
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	if _, err := run(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	last := srv.Requests()[0].JSON()["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if len(last) != 2 {
		t.Fatalf("last message has %d blocks, want the tool result and the context: %v", len(last), last)
	}
	if _, ok := last[0].(map[string]any)["cache_control"]; !ok {
		t.Errorf("no cache_control on the tool result: %v", last)
	}
	if _, ok := last[1].(map[string]any)["cache_control"]; ok {
		t.Errorf("cache_control on the per-turn context: %v", last)
	}
}

func TestThinkingSignatureRoundTrip(t *testing.T) {
	srv := testkit.NewAnthropic(t, testkit.Queue(
		testkit.Reply{Thinking: "I should list the files.", ToolCalls: []testkit.ToolCall{{ID: "toolu_9", Name: "LS"}}},
		testkit.Reply{Text: "done"},
	))
	m := newModel(t, srv)
	req := hello()
	req.Thinking = &llm.Thinking{BudgetTokens: 1024}
	first, err := llm.Collect(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	thinking := first.Message.Content[0]
	if thinking.Type != llm.BlockThinking || thinking.Signature == "" {
		t.Fatalf("first reply starts with %+v, want a signed thinking block", thinking)
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_9", "a.go", false)}})
	if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	sent := srv.Requests()[1].JSON()["messages"].([]any)[1].(map[string]any)["content"].([]any)
	want := []any{
		map[string]any{"type": "thinking", "thinking": "I should list the files.", "signature": thinking.Signature},
		map[string]any{"type": "tool_use", "id": "toolu_9", "name": "LS", "input": map[string]any{}},
	}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("assistant turn sent back (-want +got):\n%s", diff)
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name   string
		model  string // "" = one the catalogue does not know
		cfg    int64
		req    int64
		budget int64
		want   float64
	}{
		{"default", "", 0, 0, 0, 8192},
		{"default of a catalogued model", "claude-sonnet-5-5", 0, 0, 0, 32000},
		{"default under a small output limit", "claude-3-5-haiku-20241022", 0, 0, 0, 8192},
		{"config", "", 500, 0, 0, 500},
		{"request wins", "", 500, 100, 0, 100},
		{"room left for the answer past the thinking budget", "", 0, 4000, 10000, 14000},
		{"but never past the output limit", "claude-opus-4-1", 0, 8000, 30000, 32000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
			model := tt.model
			if model == "" {
				model = "claude-test"
			}
			m, err := New(Config{Model: model, APIKey: "k", BaseURL: srv.URL, MaxTokens: tt.cfg})
			if err != nil {
				t.Fatal(err)
			}
			req := hello()
			req.MaxTokens = tt.req
			if tt.budget > 0 {
				req.Thinking = &llm.Thinking{BudgetTokens: tt.budget}
			}
			if _, err := run(context.Background(), m, req); err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].JSON()["max_tokens"]; got != tt.want {
				t.Errorf("max_tokens = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"role", &llm.Request{Messages: []llm.Message{{Role: "system", Content: []llm.Block{llm.Text("x")}}}}, `unknown role "system"`},
		{"block type", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: "video"}}}}}, `message 0, block 0: unsupported block type "video"`},
		{"tool input", &llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t", "Read", json.RawMessage(`{`))}}}}, "input is not valid JSON"},
		{"schema", &llm.Request{Tools: []llm.ToolSpec{{Name: "Bad", InputSchema: json.RawMessage(`nope`)}}}, `tool "Bad": input_schema is not valid JSON`},
		{"image", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockImage}}}}}, "image without data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue())
			_, err := run(context.Background(), newModel(t, srv), tt.req)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest || !strings.Contains(e.Message, tt.want) {
				t.Errorf("err = %v, want a bad_request error mentioning %q", err, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	type got struct {
		Kind       llm.ErrorKind
		Status     int
		RetryAfter time.Duration
		Retryable  bool
	}
	tests := []struct {
		name    string
		reply   testkit.Reply
		want    got
		message string
	}{
		{"rate limit with retry-after", testkit.Reply{Status: 429, ErrorMessage: "slow down", Header: map[string]string{"retry-after": "1"}},
			got{llm.ErrRateLimit, 429, time.Second, true}, "slow down"},
		{"retry-after-ms wins", testkit.Reply{Status: 429, Header: map[string]string{"retry-after": "3", "retry-after-ms": "250"}},
			got{llm.ErrRateLimit, 429, 250 * time.Millisecond, true}, "Too Many Requests"},
		{"overloaded", testkit.Reply{Status: 529}, got{llm.ErrOverloaded, 529, 0, true}, "Overloaded"},
		{"server", testkit.Reply{Status: 500, ErrorMessage: "boom"}, got{llm.ErrServer, 500, 0, true}, "boom"},
		{"auth", testkit.Reply{Status: 401, ErrorMessage: "invalid x-api-key"}, got{llm.ErrAuth, 401, 0, false}, "invalid x-api-key"},
		{"bad request", testkit.Reply{Status: 400, ErrorMessage: "max_tokens: too large"}, got{llm.ErrBadRequest, 400, 0, false}, "max_tokens: too large"},
		{"cut stream", testkit.Reply{Text: "partial answer", CutAfter: 4}, got{llm.ErrStreamCut, 0, 0, true}, "stream cut after 3 events; nothing received was kept"},
		{"cut just before message_stop", testkit.Reply{Text: "all but the end", CutAfter: 1000}, got{llm.ErrStreamCut, 0, 0, true}, "stream cut after 7 events"},
		{"overloaded mid-stream", testkit.Reply{Text: "partial", Status: 529, CutAfter: 3}, got{llm.ErrOverloaded, 0, 0, true}, "overloaded_error event after 2 stream events"},
		{"api error mid-stream", testkit.Reply{Text: "partial", Status: 500, CutAfter: 3}, got{llm.ErrServer, 0, 0, true}, "api_error event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(tt.reply))
			evs, err := run(context.Background(), newModel(t, srv), hello())
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *llm.Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got{e.Kind, e.Status, e.RetryAfter, llm.Retryable(err)}); diff != "" {
				t.Errorf("error %q (-want +got):\n%s", err, diff)
			}
			if e.Provider != "anthropic" || !strings.Contains(e.Message, tt.message) {
				t.Errorf("error = %q, want provider anthropic and a message with %q", err, tt.message)
			}
			for _, ev := range evs {
				if ev.Type == llm.EventDone {
					t.Error("a failed stream yielded EventDone")
				}
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1: the adapter must not retry on its own", n)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := New(Config{Model: "claude-test", APIKey: "k", BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(context.Background(), m, hello())
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrServer || e.Status != 0 || !llm.Retryable(err) || !strings.Contains(e.Message, "cannot reach the API") {
		t.Errorf("err = %v, want a retryable server error with status 0", err)
	}
}

func TestCancelWhileWaitingForHeaders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	srv := testkit.NewAnthropic(t, func(testkit.Request) testkit.Reply {
		cancel() // the request has arrived and will be held
		return testkit.Reply{Text: "too late", Wait: hold}
	})
	start := time.Now()
	_, err := run(ctx, newModel(t, srv), hello())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	if llm.Retryable(err) {
		t.Error("cancellation reported as retryable")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to return after cancel", d)
	}
}

func TestCancelMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "a long answer that streams in pieces"}))
	var after []llm.Event
	var err error
	cancelled := false
	for ev, e := range newModel(t, srv).Stream(ctx, hello()) {
		if e != nil {
			err = e
			break
		}
		if cancelled {
			after = append(after, ev)
		}
		if ev.Type == llm.EventTextDelta && !cancelled {
			cancel()
			cancelled = true
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want one wrapping context.Canceled", err)
	}
	if len(after) != 0 {
		t.Errorf("events after cancel: %+v", after)
	}
}

// closeSpy records whether response bodies were closed.
type closeSpy struct {
	closed atomic.Bool
}

func (s *closeSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &spiedBody{ReadCloser: resp.Body, spy: s}
	}
	return resp, err
}

type spiedBody struct {
	io.ReadCloser
	spy *closeSpy
}

func (b *spiedBody) Close() error {
	b.spy.closed.Store(true)
	return b.ReadCloser.Close()
}

func TestConsumerStopsEarly(t *testing.T) {
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "a long answer that streams in pieces"}))
	spy := &closeSpy{}
	m, err := New(Config{Model: "claude-test", APIKey: "k", BaseURL: srv.URL, HTTPClient: &http.Client{Transport: spy}})
	if err != nil {
		t.Fatal(err)
	}
	for range m.Stream(context.Background(), hello()) {
		break
	}
	if !spy.closed.Load() {
		t.Error("the response body was left open after the consumer stopped")
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		env        map[string]string
		wantKind   llm.ErrorKind // "" = success
		wantMsg    string
		wantHeader map[string]string // checked on the request when New succeeds
	}{
		{name: "no key and no base URL", env: map[string]string{}, wantKind: llm.ErrAuth, wantMsg: "ANTHROPIC_API_KEY is not set"},
		{name: "key from the environment", env: map[string]string{"ANTHROPIC_API_KEY": "env-key"}, wantHeader: map[string]string{"Authorization": "Bearer env-key", "X-Api-Key": ""}},
		{name: "config key wins", cfg: Config{APIKey: "cfg-key"}, env: map[string]string{"ANTHROPIC_API_KEY": "env-key"}, wantHeader: map[string]string{"Authorization": "Bearer cfg-key", "X-Api-Key": ""}},
		{name: "auth token as bearer", env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "tok"}, wantHeader: map[string]string{"Authorization": "Bearer tok", "X-Api-Key": ""}},
		{name: "custom base URL needs no key", env: map[string]string{}, wantHeader: map[string]string{"X-Api-Key": "", "Authorization": ""}},
		{name: "bad base URL", cfg: Config{BaseURL: "localhost:8080"}, env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantKind: llm.ErrConfig, wantMsg: `base URL "localhost:8080" is not an http(s) URL`},
		{name: "bad base URL from the environment", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "::"}, wantKind: llm.ErrConfig, wantMsg: "ANTHROPIC_BASE_URL"},
		{name: "no model", cfg: Config{Model: "-"}, env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantKind: llm.ErrConfig, wantMsg: "no model id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
			cfg := tt.cfg
			cfg.Model = "claude-test"
			if tt.cfg.Model == "-" {
				cfg.Model = ""
			}
			vars := map[string]string{}
			for k, v := range tt.env {
				vars[k] = v
			}
			// Requests must reach the fake; for the key-only cases the base
			// URL comes from the environment, as a user would set it.
			if tt.wantKind == "" {
				vars["ANTHROPIC_BASE_URL"] = srv.URL
			}
			cfg.Getenv = env(vars)
			m, err := New(cfg)
			if tt.wantKind != "" {
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != tt.wantKind || e.Provider != "anthropic" || !strings.Contains(e.Message, tt.wantMsg) {
					t.Fatalf("err = %v, want %s error mentioning %q", err, tt.wantKind, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if m.Name() != "anthropic:claude-test" {
				t.Errorf("Name() = %q", m.Name())
			}
			if _, err := run(context.Background(), m, hello()); err != nil {
				t.Fatalf("stream: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/messages" {
				t.Fatalf("requests = %+v, want one to the base URL from ANTHROPIC_BASE_URL", reqs)
			}
			for k, v := range tt.wantHeader {
				if got := reqs[0].Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"retry-after": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"retry-after": "1.5"}, 1500 * time.Millisecond},
		{"milliseconds", map[string]string{"retry-after-ms": "120"}, 120 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"retry-after-ms": "soon", "retry-after": "2"}, 2 * time.Second},
		{"HTTP date", map[string]string{"retry-after": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"date in the past", map[string]string{"retry-after": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"negative", map[string]string{"retry-after": "-3"}, 0},
		{"garbage", map[string]string{"retry-after": "later"}, 0},
		{"NaN", map[string]string{"retry-after": "NaN"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %s, want %s", got, tt.want)
			}
		})
	}
}

// rawServer answers every request with status and body, for replies the fake
// Anthropic server will not produce.
func rawServer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOddServers(t *testing.T) {
	messageStart := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}` + "\n\n"
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		kind        llm.ErrorKind
		httpStatus  int
		message     string
	}{
		{
			name: "proxy closes the stream cleanly mid-message", status: 200, contentType: "text/event-stream",
			body: messageStart +
				"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
				"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}` + "\n\n",
			kind: llm.ErrStreamCut, message: "ended after 3 events without message_stop",
		},
		{
			name: "error page from a proxy", status: 502, contentType: "text/html", body: "<html>Bad Gateway</html>",
			kind: llm.ErrServer, httpStatus: 502, message: "<html>Bad Gateway</html>",
		},
		{
			name: "garbled event", status: 200, contentType: "text/event-stream", body: messageStart + "event: ping\ndata: {not json\n\n" + "event: content_block_start\ndata: {oops\n\n",
			kind: llm.ErrServer, message: "malformed stream event after 1 events",
		},
		{
			name: "block index out of order", status: 200, contentType: "text/event-stream",
			body: messageStart + "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}` + "\n\n",
			kind: llm.ErrServer, message: "malformed stream: event 2 (content_block_delta)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{Model: "claude-test", BaseURL: rawServer(t, tt.status, tt.contentType, tt.body)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = run(context.Background(), m, hello())
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Status != tt.httpStatus || !strings.Contains(e.Message, tt.message) {
				t.Errorf("err = %v, want %s (status %d) mentioning %q", err, tt.kind, tt.httpStatus, tt.message)
			}
		})
	}
}

// TestOneTextToolResultIsAString: a tool result of one text block reaches
// the API as a string, as Claude Code sends it (proxies to other APIs pass
// a block array on as JSON text); one with an image stays an array.
func TestOneTextToolResultIsAString(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("read"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse("toolu_1", "Read", json.RawMessage(`{}`)), llm.ToolUse("toolu_2", "Read", json.RawMessage(`{}`)),
		}},
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_1", "     1\thello", false),
			{Type: llm.BlockToolResult, ToolUseID: "toolu_2", Content: []llm.Block{
				llm.Text("a.png"), {Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
			}},
		}},
	}}
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	if _, err := run(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				Content any `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	results := body.Messages[2].Content
	if got, ok := results[0].Content.(string); !ok || got != "     1\thello" {
		t.Errorf("one text block went as %#v, want the string", results[0].Content)
	}
	if _, ok := results[1].Content.([]any); !ok {
		t.Errorf("text and an image went as %#v, want an array", results[1].Content)
	}
}
