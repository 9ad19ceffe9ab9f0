package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/provider/openai"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a Getenv over a fixed map, so tests never see the process
// environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// client returns an HTTP client of the test's own, so no idle connection
// outlives it.
func client(t *testing.T) *http.Client {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// newModel returns a model talking to srv as a compatible server would be
// configured: base URL, no key.
func newModel(t *testing.T, srv *testkit.OpenAIServer) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL, Getenv: env(), HTTPClient: client(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// collect drains a stream, returning its non-final events, the final
// response and the error.
func collect(t *testing.T, m *openai.Model, ctx context.Context, req *llm.Request) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	var resp *llm.Response
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return evs, resp, err
		}
		if ev.Type == llm.EventDone {
			if resp != nil {
				t.Fatal("two EventDone")
			}
			resp = ev.Response
			continue
		}
		if resp != nil {
			t.Fatalf("event %+v after EventDone", ev)
		}
		evs = append(evs, ev)
	}
	return evs, resp, nil
}

func hello() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
}

// joined concatenates the deltas of events of type typ and counts them.
func joined(evs []llm.Event, typ llm.EventType) (string, int) {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			b.WriteString(ev.Delta)
			n++
		}
	}
	return b.String(), n
}

func TestStreamText(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "Hello there, world", Model: "served-model"}))
	m := newModel(t, srv)
	evs, resp, err := collect(t, m, t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	text, n := joined(evs, llm.EventTextDelta)
	if text != "Hello there, world" || n < 2 {
		t.Errorf("text deltas = %q in %d events, want the text in several", text, n)
	}
	for _, ev := range evs {
		if ev.Type != llm.EventTextDelta || ev.Index != 0 {
			t.Errorf("unexpected event %+v", ev)
		}
	}
	want := &llm.Response{
		Model:      "served-model",
		Message:    llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Hello there, world")}},
		StopReason: llm.StopEndTurn,
	}
	if !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("ID = %q, want the completion id", resp.ID)
	}
	resp.ID = ""
	if d := cmp.Diff(want, resp); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{
		Text: "Reading both.",
		ToolCalls: []testkit.ToolCall{
			{ID: "call_one", Name: "Read", Input: map[string]any{"path": "a.go", "limit": 10}},
			{ID: "call_two", Name: "Grep", Input: map[string]any{"pattern": "func (m *Model)"}},
		},
	}))
	m := newModel(t, srv)
	evs, resp, err := collect(t, m, t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	var starts []llm.Event
	for _, ev := range evs {
		if ev.Type == llm.EventToolUseStart {
			starts = append(starts, ev)
		}
	}
	wantStarts := []llm.Event{
		{Type: llm.EventToolUseStart, Index: 1, ID: "call_one", Name: "Read"},
		{Type: llm.EventToolUseStart, Index: 2, ID: "call_two", Name: "Grep"},
	}
	if d := cmp.Diff(wantStarts, starts); d != "" {
		t.Errorf("tool starts (-want +got):\n%s", d)
	}
	wantContent := []llm.Block{
		llm.Text("Reading both."),
		llm.ToolUse("call_one", "Read", json.RawMessage(`{"limit":10,"path":"a.go"}`)),
		llm.ToolUse("call_two", "Grep", json.RawMessage(`{"pattern":"func (m *Model)"}`)),
	}
	if d := cmp.Diff(wantContent, resp.Message.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("StopReason = %q, want tool_use", resp.StopReason)
	}
}

func TestStreamReasoningContent(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Thinking: "The user greets me.", Text: "Hi!"}))
	m := newModel(t, srv)
	evs, resp, err := collect(t, m, t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	thinking, n := joined(evs, llm.EventThinkingDelta)
	if thinking != "The user greets me." || n < 2 {
		t.Errorf("thinking deltas = %q in %d events, want the reasoning in several", thinking, n)
	}
	for _, ev := range evs {
		if want := map[llm.EventType]int{llm.EventThinkingDelta: 0, llm.EventTextDelta: 1}[ev.Type]; ev.Index != want {
			t.Errorf("%s event has index %d, want %d", ev.Type, ev.Index, want)
		}
	}
	want := []llm.Block{{Type: llm.BlockThinking, Thinking: "The user greets me."}, llm.Text("Hi!")}
	if d := cmp.Diff(want, resp.Message.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
}

// A server that calls the field "reasoning" (newer vLLM, Ollama) is
// understood too.
func TestStreamReasoningField(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning":"hmm"}}]}`,
			`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		} {
			_, _ = io.WriteString(w, "data: "+c+"\n\n")
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	m, err := openai.New(openai.Config{Model: "m", BaseURL: ts.URL + "/v1", Getenv: env(), HTTPClient: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := collect(t, m, t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{{Type: llm.BlockThinking, Thinking: "hmm"}, llm.Text("ok")}
	if d := cmp.Diff(want, resp.Message.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
}

// A server that sends a tool call without an id gets one made up, the same
// in the start event and the final block.
func TestStreamToolCallWithoutID(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"LS","arguments":"{}"}}]}}]}`,
			`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		} {
			_, _ = io.WriteString(w, "data: "+c+"\n\n")
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	m, err := openai.New(openai.Config{Model: "m", BaseURL: ts.URL + "/v1", Getenv: env(), HTTPClient: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, resp, err := collect(t, m, t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	uses := resp.Message.ToolUses()
	if len(evs) != 1 || len(uses) != 1 || !strings.HasPrefix(uses[0].ID, "call_") || evs[0].ID != uses[0].ID {
		t.Fatalf("events %+v, tool uses %+v: want one call with the same made-up call_ id", evs, uses)
	}
	// finish_reason "stop" with a tool call, as older Ollama sends it.
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("StopReason = %q, want tool_use", resp.StopReason)
	}
}

func TestStreamToolArguments(t *testing.T) {
	tests := []struct {
		name string
		args any
		want string
	}{
		{"empty", "", `{}`},
		{"object", map[string]any{"a": 1}, `{"a":1}`},
		// Invalid JSON is kept as a JSON string, for the tool's schema
		// validation to reject with the text the model sent.
		{"invalid", `{"path": "a.go"`, `"{\"path\": \"a.go\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "call_x", Name: "T", Input: tt.args}}}))
			_, resp, err := collect(t, newModel(t, srv), t.Context(), hello())
			if err != nil {
				t.Fatal(err)
			}
			uses := resp.Message.ToolUses()
			if len(uses) != 1 || string(uses[0].Input) != tt.want {
				t.Errorf("tool uses = %+v, want one with input %s", uses, tt.want)
			}
			if _, err := json.Marshal(resp.Message); err != nil {
				t.Errorf("the message does not marshal: %v", err)
			}
		})
	}
}

func TestStreamUsage(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{
		Text:  "cached",
		Usage: llm.Usage{InputTokens: 12, OutputTokens: 7, CacheReadInputTokens: 1024},
	}))
	_, resp, err := collect(t, newModel(t, srv), t.Context(), hello())
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 12, OutputTokens: 7, CacheReadInputTokens: 1024}
	if d := cmp.Diff(want, resp.Usage); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
}

func TestStreamStopReasons(t *testing.T) {
	tests := []struct {
		reply testkit.Reply
		want  llm.StopReason
	}{
		{testkit.Reply{Text: "x"}, llm.StopEndTurn},
		{testkit.Reply{Text: "x", StopReason: "max_tokens"}, llm.StopMaxTokens},
		{testkit.Reply{Text: "x", StopReason: "content_filter"}, llm.StopContentFilter},
		{testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "T"}}}, llm.StopToolUse},
		{testkit.Reply{Text: "x", StopReason: "function_call"}, llm.StopToolUse},
	}
	for _, tt := range tests {
		srv := testkit.NewOpenAI(t, testkit.Queue(tt.reply))
		_, resp, err := collect(t, newModel(t, srv), t.Context(), hello())
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != tt.want {
			t.Errorf("Reply.StopReason %q: StopReason = %q, want %q", tt.reply.StopReason, resp.StopReason, tt.want)
		}
	}
}

// conversation is a request exercising every mapping rule.
func conversation() *llm.Request {
	temp := 0.25
	return &llm.Request{
		System: "You are terse.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.Text("What is in these?"),
				{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "secret", Signature: "sig"},
				llm.Text("Let me look."),
				llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a.go"}`)),
				llm.ToolUse("call_2", "Bash", json.RawMessage(`{"command":"false"}`)),
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.ToolResult("call_1", "package a", false),
				llm.ToolResult("call_2", "exit status 1", true),
				llm.Text("Also, hurry."),
			}},
		},
		Tools: []llm.ToolSpec{{
			Name:        "Read",
			Description: "Reads a file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		}},
		MaxTokens:   1000,
		Temperature: &temp,
	}
}

func TestRequestBody(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	m := newModel(t, srv)
	if _, _, err := collect(t, m, t.Context(), conversation()); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"model": "test-model",
		"stream": true,
		"stream_options": {"include_usage": true},
		"max_tokens": 1000,
		"temperature": 0.25,
		"messages": [
			{"role": "system", "content": "You are terse."},
			{"role": "user", "content": [
				{"type": "text", "text": "What is in these?"},
				{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
			]},
			{"role": "assistant", "content": "Let me look.", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a.go\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"false\"}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "package a"},
			{"role": "tool", "tool_call_id": "call_2", "content": "Error: exit status 1"},
			{"role": "user", "content": "Also, hurry."}
		],
		"tools": [{"type": "function", "function": {
			"name": "Read",
			"description": "Reads a file.",
			"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
		}}]
	}`), &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, reqs[0].JSON()); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none when no key is configured", got)
	}
}

// redirect sends every request to target, whatever host it names, so a
// model configured for the official API can be tested against the fake.
type redirect struct{ target *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	req.Host = r.target.Host
	return http.DefaultTransport.RoundTrip(req)
}

// The official endpoint gets max_completion_tokens; any other base URL
// (a compatible server) gets max_tokens.
func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		name, baseURL, want, notWant string
	}{
		{"official default", "", "max_completion_tokens", "max_tokens"},
		{"official explicit", "https://api.openai.com/v1", "max_completion_tokens", "max_tokens"},
		{"compatible", "http://vllm.internal:8000/v1", "max_tokens", "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}, testkit.Reply{Text: "ok"}))
			target, _ := url.Parse(srv.URL)
			c := &http.Client{Transport: redirect{target}}
			m, err := openai.New(openai.Config{Model: "gpt-x", APIKey: "sk-test", BaseURL: tt.baseURL, Getenv: env(), HTTPClient: c})
			if err != nil {
				t.Fatal(err)
			}
			req := hello()
			req.MaxTokens = 64
			if _, _, err := collect(t, m, t.Context(), req); err != nil {
				t.Fatal(err)
			}
			// Without MaxTokens neither field is sent.
			if _, _, err := collect(t, m, t.Context(), hello()); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			body := reqs[0].JSON()
			if body[tt.want] != float64(64) || body[tt.notWant] != nil {
				t.Errorf("body has %s=%v %s=%v, want only %s=64", tt.want, body[tt.want], tt.notWant, body[tt.notWant], tt.want)
			}
			for _, f := range []string{"max_tokens", "max_completion_tokens"} {
				if v, ok := reqs[1].JSON()[f]; ok {
					t.Errorf("without MaxTokens the body has %s=%v", f, v)
				}
			}
			if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q, want Bearer sk-test", got)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply testkit.Reply
		want  llm.Error
	}{
		{"429 retry-after", testkit.Reply{Status: 429, ErrorMessage: "Rate limit reached", Header: map[string]string{"retry-after": "2"}},
			llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 2 * time.Second}},
		{"429 retry-after-ms", testkit.Reply{Status: 429, ErrorMessage: "Rate limit reached", Header: map[string]string{"retry-after-ms": "1500", "retry-after": "2"}},
			llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 1500 * time.Millisecond}},
		{"429 quota", testkit.Reply{Status: 429, ErrorType: "insufficient_quota", ErrorMessage: "You exceeded your current quota"},
			llm.Error{Kind: llm.ErrOther, Status: 429}},
		{"500", testkit.Reply{Status: 500, ErrorMessage: "The server had an error"},
			llm.Error{Kind: llm.ErrServer, Status: 500}},
		{"503", testkit.Reply{Status: 503, ErrorMessage: "Service unavailable"},
			llm.Error{Kind: llm.ErrServer, Status: 503}},
		{"401", testkit.Reply{Status: 401, ErrorMessage: "Incorrect API key provided"},
			llm.Error{Kind: llm.ErrAuth, Status: 401}},
		{"400", testkit.Reply{Status: 400, ErrorMessage: "Invalid schema for function"},
			llm.Error{Kind: llm.ErrBadRequest, Status: 400}},
		{"mid-stream error", testkit.Reply{Text: "partial answer", Status: 500, ErrorMessage: "stream failed", CutAfter: 2},
			llm.Error{Kind: llm.ErrServer}},
		{"cut mid-text", testkit.Reply{Text: "a text to be cut", CutAfter: 2},
			llm.Error{Kind: llm.ErrStreamCut}},
		{"cut before [DONE]", testkit.Reply{Text: "complete but no [DONE]", CutAfter: 100},
			llm.Error{Kind: llm.ErrStreamCut}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(tt.reply))
			_, resp, err := collect(t, newModel(t, srv), t.Context(), hello())
			if resp != nil {
				t.Fatalf("got a response %+v, want an error", resp)
			}
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
			}
			got := llm.Error{Kind: e.Kind, Status: e.Status, RetryAfter: e.RetryAfter}
			if d := cmp.Diff(tt.want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Err" }, cmp.Ignore())); d != "" {
				t.Errorf("error %v (-want +got):\n%s", err, d)
			}
			if e.Provider != "openai" {
				t.Errorf("Provider = %q, want openai", e.Provider)
			}
			// Retrying is the caller's job: the SDK must not have retried.
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("the server saw %d requests, want 1", n)
			}
			if tt.reply.ErrorMessage != "" && !strings.Contains(err.Error(), tt.reply.ErrorMessage) {
				t.Errorf("error %q does not carry the server's message %q", err, tt.reply.ErrorMessage)
			}
			if want := tt.want.Kind == llm.ErrRateLimit || tt.want.Kind == llm.ErrServer || tt.want.Kind == llm.ErrStreamCut; llm.Retryable(err) != want {
				t.Errorf("Retryable = %v, want %v", llm.Retryable(err), want)
			}
		})
	}
}

// Deltas received before a cut still reached the consumer.
func TestCutStreamKeepsDeltas(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "abcdefghi", CutAfter: 3}))
	evs, _, err := collect(t, newModel(t, srv), t.Context(), hello())
	if !llm.Retryable(err) {
		t.Fatalf("err = %v, want a retryable cut", err)
	}
	if text, _ := joined(evs, llm.EventTextDelta); text != "abcdef" {
		t.Errorf("text before the cut = %q, want abcdef", text)
	}
}

// Compatible servers answer errors in their own shapes.
func TestCompatibleErrorBodies(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		want       string
		kind       llm.ErrorKind
	}{
		{"ollama", `{"error":"model \"llama9\" not found, try pulling it first"}`, 404, `model "llama9" not found`, llm.ErrBadRequest},
		{"vllm", `{"object":"error","message":"This model's maximum context length is 4096 tokens","type":"BadRequestError","code":400}`, 400, "maximum context length", llm.ErrBadRequest},
		{"fastapi", `{"detail":"Not Found"}`, 404, "Not Found", llm.ErrBadRequest},
		{"plain", `upstream connect error`, 502, "upstream connect error", llm.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(ts.Close)
			m, err := openai.New(openai.Config{Model: "m", BaseURL: ts.URL + "/v1", Getenv: env(), HTTPClient: client(t)})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = collect(t, m, t.Context(), hello())
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Status != tt.status || e.RetryAfter != 7*time.Second || !strings.Contains(e.Message, tt.want) {
				t.Errorf("err = %#v, want %s, HTTP %d, retry after 7s, message containing %q", e, tt.kind, tt.status, tt.want)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	base := ts.URL + "/v1"
	ts.Close()
	m, err := openai.New(openai.Config{Model: "m", BaseURL: base, Getenv: env(), HTTPClient: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = collect(t, m, t.Context(), hello())
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrServer || e.Status != 0 {
		t.Errorf("err = %v, want ErrServer without status", err)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	arrived := make(chan struct{})
	srv := testkit.NewOpenAI(t, func(testkit.Request) testkit.Reply {
		close(arrived)
		return testkit.Reply{Text: "never", Wait: make(chan struct{})}
	})
	m := newModel(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(t, m, ctx, hello())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want one wrapping context.Canceled", err)
		}
		var e *llm.Error
		if errors.As(err, &e) {
			t.Errorf("cancellation reported as a provider error %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
	}
}

// Cancelling mid-stream stops the events at once: none arrives after the
// consumer's cancel, and the error wraps ctx.Err().
func TestCancelMidStream(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "one two three four five six"}))
	m := newModel(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var after int
	var last error
	first := true
	for ev, err := range m.Stream(ctx, hello()) {
		if err != nil {
			last = err
			break
		}
		if first {
			first = false
			cancel()
			continue
		}
		after++
		_ = ev
	}
	if after != 0 {
		t.Errorf("%d events after cancel, want none", after)
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("err = %v, want one wrapping context.Canceled", last)
	}
}

// closeWatch records whether response bodies were closed.
type closeWatch struct{ closed atomic.Int32 }

type watchedBody struct {
	io.ReadCloser
	w *closeWatch
}

func (b watchedBody) Close() error {
	b.w.closed.Add(1)
	return b.ReadCloser.Close()
}

func (w *closeWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if resp != nil {
		resp.Body = watchedBody{resp.Body, w}
	}
	return resp, err
}

func TestConsumerStopClosesStream(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "one two three four five six"}))
	watch := &closeWatch{}
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL, Getenv: env(), HTTPClient: &http.Client{Transport: watch}})
	if err != nil {
		t.Fatal(err)
	}
	for range m.Stream(t.Context(), hello()) {
		break
	}
	if watch.closed.Load() == 0 {
		t.Error("the response body was not closed when the consumer stopped")
	}
}

func TestNewKeyRules(t *testing.T) {
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr llm.ErrorKind
	}{
		{"no key, no base URL", openai.Config{Model: "gpt-4o-mini", Getenv: env()}, llm.ErrAuth},
		{"key from env", openai.Config{Model: "gpt-4o-mini", Getenv: env("OPENAI_API_KEY", "sk-env")}, ""},
		{"key in config", openai.Config{Model: "gpt-4o-mini", APIKey: "sk-cfg", Getenv: env()}, ""},
		{"base URL, no key", openai.Config{Model: "qwen3", BaseURL: "http://localhost:8000/v1", Getenv: env()}, ""},
		{"base URL from env, no key", openai.Config{Model: "qwen3", Getenv: env("OPENAI_BASE_URL", "http://localhost:11434/v1")}, ""},
		{"no model", openai.Config{APIKey: "sk", Getenv: env()}, llm.ErrConfig},
		{"bad base URL", openai.Config{Model: "m", BaseURL: "localhost:8000", Getenv: env()}, llm.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := openai.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || m == nil {
					t.Fatalf("New = %v, %v; want a model", m, err)
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.wantErr {
				t.Fatalf("New err = %v, want %s", err, tt.wantErr)
			}
			if tt.wantErr == llm.ErrAuth && (!strings.Contains(err.Error(), "OPENAI_API_KEY") || e.Provider != "openai") {
				t.Errorf("err = %v, want it to name OPENAI_API_KEY and provider openai", err)
			}
		})
	}
}

// The process environment is never read behind the Config's back: a key in
// OPENAI_API_KEY is not sent when Getenv does not return it.
func TestProcessEnvironmentIgnored(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-process")
	t.Setenv("OPENAI_ORG_ID", "org-process")
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}, testkit.Reply{Text: "ok"}))
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL, Getenv: env(), HTTPClient: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := collect(t, m, t.Context(), hello()); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" || h.Get("OpenAI-Organization") != "" {
		t.Errorf("headers carry the process environment: Authorization %q, OpenAI-Organization %q", h.Get("Authorization"), h.Get("OpenAI-Organization"))
	}
	// The config's key wins over Getenv's.
	m, err = openai.New(openai.Config{Model: "m", APIKey: "sk-config", BaseURL: srv.URL, Getenv: env("OPENAI_API_KEY", "sk-env"), HTTPClient: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := collect(t, m, t.Context(), hello()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer sk-config" {
		t.Errorf("Authorization = %q, want Bearer sk-config", got)
	}
}

func TestBaseURLFromEnv(t *testing.T) {
	for _, suffix := range []string{"", "/"} {
		t.Run("suffix "+suffix, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}))
			m, err := openai.New(openai.Config{Model: "m", Getenv: env("OPENAI_BASE_URL", srv.URL+suffix, "OPENAI_API_KEY", "sk-local"), HTTPClient: client(t)})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := collect(t, m, t.Context(), hello()); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-local" {
				t.Errorf("request went to %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		cfg  openai.Config
		want string
	}{
		{openai.Config{Model: "gpt-4o-mini", APIKey: "k"}, "openai:gpt-4o-mini"},
		{openai.Config{Model: "qwen3-max", BaseURL: "https://dashscope.example/v1", Provider: "qwen"}, "qwen:qwen3-max"},
	}
	for _, tt := range tests {
		tt.cfg.Getenv = env()
		m, err := openai.New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Name(); got != tt.want {
			t.Errorf("Name = %q, want %q", got, tt.want)
		}
	}
}

// The model of the request, when given, wins over the configured one.
func TestRequestModel(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	req := hello()
	req.Model = "other-model"
	if _, _, err := collect(t, newModel(t, srv), t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].JSON()["model"]; got != "other-model" {
		t.Errorf("model sent = %v, want other-model", got)
	}
}

func TestBadToolSchema(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue())
	req := hello()
	req.Tools = []llm.ToolSpec{{Name: "Broken", InputSchema: json.RawMessage(`[1,2]`)}}
	_, _, err := collect(t, newModel(t, srv), t.Context(), req)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest || !strings.Contains(err.Error(), "Broken") {
		t.Errorf("err = %v, want ErrBadRequest naming the tool", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the server saw %d requests, want none", n)
	}
}

// TestOneTextToolResultIsAString: a tool result of one text block reaches
// the server as the tool message's string content, never as a block array
// (a proxy would pass an array on as JSON text the model then reads).
func TestOneTextToolResultIsAString(t *testing.T) {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: "ok"}))
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("read"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("call_1", "Read", json.RawMessage(`{}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("call_1", "     1\thello", false)}},
	}}
	if _, _, err := collect(t, newModel(t, srv), context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var tool []any
	for _, m := range body.Messages {
		if m.Role == "tool" {
			tool = append(tool, m.Content)
		}
	}
	if len(tool) != 1 || tool[0] != "     1\thello" {
		t.Errorf("tool messages' content %#v, want the one string", tool)
	}
}
