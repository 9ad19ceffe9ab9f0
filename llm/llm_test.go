package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// jsonDiff compares two JSON documents by value, so that a missing, extra or
// renamed key shows up but key order and whitespace do not.
func jsonDiff(t *testing.T, got, want []byte) string {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	return cmp.Diff(w, g)
}

func TestBlockJSONIsAnthropicShapeAndRoundTrips(t *testing.T) {
	tests := []struct {
		name  string
		block llm.Block
		want  string // the Anthropic Messages API form
	}{
		{
			name:  "text",
			block: llm.Text("hello"),
			want:  `{"type":"text","text":"hello"}`,
		},
		{
			name:  "thinking with signature",
			block: llm.Block{Type: llm.BlockThinking, Thinking: "let me think", Signature: "EqQBCkYIARgCKkA=="},
			want:  `{"type":"thinking","thinking":"let me think","signature":"EqQBCkYIARgCKkA=="}`,
		},
		{
			name:  "redacted thinking",
			block: llm.Block{Type: llm.BlockRedactedThinking, Data: "EmwKAhgBEgy3va3pzix"},
			want:  `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}`,
		},
		{
			name:  "tool_use with raw input",
			block: llm.ToolUse("toolu_01", "Read", json.RawMessage(`{"z":1,"a":[true,null],"n":{"k":"v"}}`)),
			want:  `{"type":"tool_use","id":"toolu_01","name":"Read","input":{"z":1,"a":[true,null],"n":{"k":"v"}}}`,
		},
		{
			name:  "tool_use with nil input",
			block: llm.ToolUse("toolu_02", "LS", nil),
			want:  `{"type":"tool_use","id":"toolu_02","name":"LS","input":{}}`,
		},
		{
			name:  "tool_result",
			block: llm.ToolResult("toolu_01", "file body", false),
			want:  `{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"file body"}]}`,
		},
		{
			name: "tool_result with nested content and is_error",
			block: llm.Block{
				Type:      llm.BlockToolResult,
				ToolUseID: "toolu_03",
				IsError:   true,
				Content: []llm.Block{
					llm.Text("first "),
					{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
					llm.Text("second"),
				},
			},
			want: `{"type":"tool_result","tool_use_id":"toolu_03","is_error":true,"content":[
				{"type":"text","text":"first "},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
				{"type":"text","text":"second"}]}`,
		},
		{
			name:  "image",
			block: llm.Block{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/jpeg", Data: "/9j/4AAQ"}},
			want:  `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.block)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if d := jsonDiff(t, got, []byte(tt.want)); d != "" {
				t.Errorf("JSON (-want +got):\n%s\ngot: %s", d, got)
			}
			var back llm.Block
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", got, err)
			}
			if d := cmp.Diff(tt.block, back); d != "" {
				t.Errorf("round trip (-before +after):\n%s", d)
			}
			// Decoding the API's own form gives the same block.
			var fromAPI llm.Block
			if err := json.Unmarshal([]byte(tt.want), &fromAPI); err != nil {
				t.Fatalf("Unmarshal(want): %v", err)
			}
			if d := cmp.Diff(tt.block, fromAPI); d != "" {
				t.Errorf("decoded API form (-want +got):\n%s", d)
			}
		})
	}
}

// The tool_use input is raw JSON: the model's key order survives a round trip
// (a map would sort it), which keeps transcripts byte-faithful.
func TestToolUseInputKeptVerbatim(t *testing.T) {
	const input = `{"z":1,"a":[true,null],"n":{"k":"v"}}`
	got, err := json.Marshal(llm.ToolUse("toolu_01", "Read", json.RawMessage(input)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"input":`+input) {
		t.Errorf("marshalled tool_use %s does not carry input %s verbatim", got, input)
	}
	var back llm.Block
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Input) != input {
		t.Errorf("decoded input = %s, want %s", back.Input, input)
	}
}

func TestToolUseEmptyInputBecomesObject(t *testing.T) {
	for _, in := range []json.RawMessage{nil, {}} {
		b := llm.ToolUse("toolu_1", "LS", in)
		if string(b.Input) != "{}" {
			t.Errorf("ToolUse(%q).Input = %q, want {}", in, b.Input)
		}
		if b.Type != llm.BlockToolUse || b.ID != "toolu_1" || b.Name != "LS" {
			t.Errorf("ToolUse = %+v", b)
		}
	}
}

func TestMessageJSON(t *testing.T) {
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockThinking, Thinking: "hmm", Signature: "sig"},
		llm.Text("Reading it."),
		llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"file_path":"/a"}`)),
	}}
	const want = `{"role":"assistant","content":[
		{"type":"thinking","thinking":"hmm","signature":"sig"},
		{"type":"text","text":"Reading it."},
		{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}}]}`
	got, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(t, got, []byte(want)); d != "" {
		t.Errorf("Message JSON (-want +got):\n%s", d)
	}
	var back llm.Message
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(msg, back); d != "" {
		t.Errorf("round trip (-before +after):\n%s", d)
	}

	user := llm.UserText("hi")
	if d := cmp.Diff(llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hi")}}, user); d != "" {
		t.Errorf("UserText (-want +got):\n%s", d)
	}
}

func TestMessageWithoutBlocksHasContentArray(t *testing.T) {
	got, err := json.Marshal(llm.Message{Role: llm.RoleAssistant})
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(t, got, []byte(`{"role":"assistant","content":[]}`)); d != "" {
		t.Errorf("empty Message JSON (-want +got):\n%s", d)
	}
}

func TestToolResultWithStringContentDecodes(t *testing.T) {
	var b llm.Block
	if err := json.Unmarshal([]byte(`{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}`), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if d := cmp.Diff(llm.ToolResult("toolu_1", "done", false), b); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
}

func TestMessageText(t *testing.T) {
	tests := []struct {
		name    string
		content []llm.Block
		want    string
	}{
		{"no blocks", nil, ""},
		{"one text", []llm.Block{llm.Text("hello")}, "hello"},
		{"texts concatenated in order", []llm.Block{llm.Text("a"), llm.Text("b"), llm.Text("c")}, "abc"},
		{
			"non-text blocks skipped",
			[]llm.Block{
				{Type: llm.BlockThinking, Thinking: "secret"},
				llm.Text("x"),
				llm.ToolUse("t1", "Read", nil),
				llm.ToolResult("t0", "result text", false),
				{Type: llm.BlockRedactedThinking, Data: "opaque"},
				llm.Text("y"),
			},
			"xy",
		},
		{"only tool results", []llm.Block{llm.ToolResult("t0", "result text", false)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llm.Message{Role: llm.RoleAssistant, Content: tt.content}
			if got := m.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMessageToolUses(t *testing.T) {
	a := llm.ToolUse("t1", "Read", json.RawMessage(`{"a":1}`))
	b := llm.ToolUse("t2", "Grep", nil)
	tests := []struct {
		name    string
		content []llm.Block
		want    []llm.Block
	}{
		{"none", []llm.Block{llm.Text("hi")}, nil},
		{"empty message", nil, nil},
		{"in order among other blocks", []llm.Block{llm.Text("x"), a, llm.ToolResult("t0", "r", false), b, llm.Text("y")}, []llm.Block{a, b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := llm.Message{Content: tt.content}.ToolUses()
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ToolUses() (-want +got):\n%s", d)
			}
		})
	}
}

func TestBlockResultText(t *testing.T) {
	img := llm.Block{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "x"}}
	tests := []struct {
		name  string
		block llm.Block
		want  string
	}{
		{"helper", llm.ToolResult("t", "done", false), "done"},
		{"error result", llm.ToolResult("t", "boom", true), "boom"},
		{"no content", llm.Block{Type: llm.BlockToolResult, ToolUseID: "t"}, ""},
		{"texts joined, images skipped", llm.Block{Type: llm.BlockToolResult, Content: []llm.Block{llm.Text("a"), img, llm.Text("b")}}, "ab"},
		{"only an image", llm.Block{Type: llm.BlockToolResult, Content: []llm.Block{img}}, ""},
		{"three texts", llm.Block{Type: llm.BlockToolResult, Content: []llm.Block{img, llm.Text("a"), llm.Text("b"), llm.Text("c")}}, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.block.ResultText(); got != tt.want {
				t.Errorf("ResultText() = %q, want %q", got, tt.want)
			}
		})
	}
	// One text block, the usual result, is returned as it is: reading a
	// conversation's results must not copy each one.
	one := llm.ToolResult("t", strings.Repeat("x", 1000), false)
	if n := testing.AllocsPerRun(10, func() { _ = one.ResultText() }); n != 0 {
		t.Errorf("ResultText of one text block allocated %v times, want 0", n)
	}
}

func TestUsage(t *testing.T) {
	u := llm.Usage{InputTokens: 1, OutputTokens: 20, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000}
	v := llm.Usage{InputTokens: 10000, OutputTokens: 200000, CacheCreationInputTokens: 3000000, CacheReadInputTokens: 40000000}
	tests := []struct {
		name      string
		a, b      llm.Usage
		want      llm.Usage
		wantTotal int64
	}{
		{"zero plus zero", llm.Usage{}, llm.Usage{}, llm.Usage{}, 0},
		{"zero is identity", u, llm.Usage{}, u, 4321},
		{"every field summed", u, v, llm.Usage{InputTokens: 10001, OutputTokens: 200020, CacheCreationInputTokens: 3000300, CacheReadInputTokens: 40004000}, 43214321},
		{"commutes", v, u, llm.Usage{InputTokens: 10001, OutputTokens: 200020, CacheCreationInputTokens: 3000300, CacheReadInputTokens: 40004000}, 43214321},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.a
			got := tt.a.Add(tt.b)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Add (-want +got):\n%s", d)
			}
			if tt.a != before {
				t.Errorf("Add changed its receiver to %+v", tt.a)
			}
			if got.Total() != tt.wantTotal {
				t.Errorf("Total() = %d, want %d", got.Total(), tt.wantTotal)
			}
		})
	}

	// The JSON names are the Anthropic ones.
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(t, raw, []byte(`{"input_tokens":1,"output_tokens":20,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000}`)); d != "" {
		t.Errorf("Usage JSON (-want +got):\n%s", d)
	}
}

// step is one item a fake stream yields.
type step struct {
	ev  llm.Event
	err error
}

// fakeStream yields steps in order and counts in *yielded how many it handed
// over, so a test can tell whether the consumer stopped pulling.
func fakeStream(steps []step, yielded *int) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, s := range steps {
			*yielded++
			if !yield(s.ev, s.err) {
				return
			}
		}
	}
}

func TestCollect(t *testing.T) {
	done := &llm.Response{ID: "msg_1", Model: "m", Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hi")}}, StopReason: llm.StopEndTurn}
	boom := &llm.Error{Kind: llm.ErrOverloaded, Provider: "anthropic", Message: "overloaded"}
	tests := []struct {
		name        string
		steps       []step
		want        *llm.Response
		wantErr     error         // matched with errors.Is
		wantKind    llm.ErrorKind // when the error is Collect's own
		wantYielded int           // steps handed over before Collect stopped
	}{
		{
			name: "success",
			steps: []step{
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "h"}},
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "i"}},
				{ev: llm.Event{Type: llm.EventDone, Response: done}},
			},
			want:        done,
			wantYielded: 3,
		},
		{
			name: "retry then success",
			steps: []step{
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "partial"}},
				{ev: llm.Event{Type: llm.EventRetry, Delta: "overloaded"}},
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "hi"}},
				{ev: llm.Event{Type: llm.EventDone, Response: done}},
			},
			want:        done,
			wantYielded: 4,
		},
		{
			name: "error mid-stream stops the stream",
			steps: []step{
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "h"}},
				{err: boom},
				{ev: llm.Event{Type: llm.EventDone, Response: done}},
			},
			wantErr:     boom,
			wantYielded: 2,
		},
		{
			name:        "error first",
			steps:       []step{{err: context.Canceled}},
			wantErr:     context.Canceled,
			wantYielded: 1,
		},
		{
			name: "no EventDone",
			steps: []step{
				{ev: llm.Event{Type: llm.EventTextDelta, Delta: "h"}},
				{ev: llm.Event{Type: llm.EventToolUseStart, ID: "t1", Name: "Read"}},
			},
			wantKind:    llm.ErrStreamCut,
			wantYielded: 2,
		},
		{
			name:     "empty stream",
			wantKind: llm.ErrStreamCut,
		},
		{
			name:        "EventDone without a response",
			steps:       []step{{ev: llm.Event{Type: llm.EventDone}}},
			wantKind:    llm.ErrStreamCut,
			wantYielded: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var yielded int
			got, err := llm.Collect(fakeStream(tt.steps, &yielded))
			if yielded != tt.wantYielded {
				t.Errorf("stream handed over %d steps, want %d", yielded, tt.wantYielded)
			}
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.wantKind != "":
				var le *llm.Error
				if !errors.As(err, &le) || le.Kind != tt.wantKind {
					t.Fatalf("err = %#v, want an *llm.Error of kind %s", err, tt.wantKind)
				}
				if !llm.Retryable(err) {
					t.Errorf("a cut stream should be retryable: %v", err)
				}
				if le.Message == "" {
					t.Errorf("cut-stream error has no message")
				}
			default:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			}
			if got != tt.want {
				t.Errorf("response = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	inner := errors.New("connection reset by peer")
	tests := []struct {
		name string
		err  *llm.Error
		want string
	}{
		{"with status", &llm.Error{Kind: llm.ErrRateLimit, Provider: "anthropic", Status: 429, Message: "slow down"}, "anthropic: rate_limit (HTTP 429): slow down"},
		{"without status", &llm.Error{Kind: llm.ErrStreamCut, Provider: "openai", Message: "unexpected EOF"}, "openai: stream_cut: unexpected EOF"},
		{"no provider", &llm.Error{Kind: llm.ErrServer, Status: 502, Message: "bad gateway"}, "model: server (HTTP 502): bad gateway"},
		{"no provider, no status", &llm.Error{Kind: llm.ErrConfig, Message: `unknown provider "foo"`}, `model: config: unknown provider "foo"`},
		{"message from wrapped error", &llm.Error{Kind: llm.ErrStreamCut, Provider: "anthropic", Err: inner}, "anthropic: stream_cut: connection reset by peer"},
		{"message wins over wrapped error", &llm.Error{Kind: llm.ErrAuth, Provider: "anthropic", Status: 401, Message: "invalid x-api-key", Err: inner}, "anthropic: auth (HTTP 401): invalid x-api-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}

	e := &llm.Error{Kind: llm.ErrStreamCut, Err: inner}
	if !errors.Is(e, inner) {
		t.Errorf("errors.Is(%v, inner) = false; Unwrap should expose the cause", e)
	}
	if (&llm.Error{Kind: llm.ErrOther}).Unwrap() != nil {
		t.Errorf("Unwrap of an Error without a cause should be nil")
	}
}

func TestRetryable(t *testing.T) {
	kinds := []struct {
		kind llm.ErrorKind
		want bool
	}{
		{llm.ErrRateLimit, true},
		{llm.ErrOverloaded, true},
		{llm.ErrServer, true},
		{llm.ErrStreamCut, true},
		{llm.ErrTimeout, true},
		{llm.ErrAuth, false},
		{llm.ErrBadRequest, false},
		{llm.ErrConfig, false},
		{llm.ErrOther, false},
		{"", false},
	}
	for _, k := range kinds {
		e := &llm.Error{Kind: k.kind, Provider: "p", Message: "m"}
		forms := map[string]error{
			"direct":        e,
			"wrapped":       fmt.Errorf("turn 3: %w", e),
			"wrapped twice": fmt.Errorf("agent main: %w", fmt.Errorf("turn 3: %w", e)),
			"joined":        errors.Join(errors.New("cleanup failed"), e),
		}
		for form, err := range forms {
			t.Run(string(k.kind)+"/"+form, func(t *testing.T) {
				if got := llm.Retryable(err); got != k.want {
					t.Errorf("Retryable(%v) = %v, want %v", err, got, k.want)
				}
			})
		}
	}

	others := map[string]error{
		"nil":                      nil,
		"plain error":              errors.New("rate limit exceeded"),
		"context canceled":         context.Canceled,
		"deadline exceeded":        context.DeadlineExceeded,
		"wrapped deadline":         fmt.Errorf("call: %w", context.DeadlineExceeded),
		"fmt without %w of *Error": fmt.Errorf("turn: %v", &llm.Error{Kind: llm.ErrRateLimit}),
	}
	for name, err := range others {
		t.Run("non-llm/"+name, func(t *testing.T) {
			if llm.Retryable(err) {
				t.Errorf("Retryable(%v) = true, want false", err)
			}
		})
	}
}

func TestKindForStatus(t *testing.T) {
	tests := []struct {
		status int
		want   llm.ErrorKind
	}{
		{0, llm.ErrOther},
		{200, llm.ErrOther},
		{302, llm.ErrOther},
		{400, llm.ErrBadRequest},
		{401, llm.ErrAuth},
		{403, llm.ErrAuth},
		{404, llm.ErrBadRequest},
		{413, llm.ErrBadRequest},
		{422, llm.ErrBadRequest},
		{429, llm.ErrRateLimit},
		{499, llm.ErrBadRequest},
		{500, llm.ErrServer},
		{502, llm.ErrServer},
		{503, llm.ErrServer},
		{504, llm.ErrServer},
		{529, llm.ErrOverloaded},
		{599, llm.ErrServer},
	}
	for _, tt := range tests {
		if got := llm.KindForStatus(tt.status); got != tt.want {
			t.Errorf("KindForStatus(%d) = %q, want %q", tt.status, got, tt.want)
		}
	}
}

// eventSummary is the comparable part of an Event.
type eventSummary struct {
	Type  llm.EventType
	Delta string
}

func drain(t *testing.T, stream iter.Seq2[llm.Event, error]) ([]eventSummary, *llm.Response, error) {
	t.Helper()
	var evs []eventSummary
	var resp *llm.Response
	for ev, err := range stream {
		if err != nil {
			return evs, nil, err
		}
		evs = append(evs, eventSummary{ev.Type, ev.Delta})
		if ev.Type == llm.EventDone {
			resp = ev.Response
		}
	}
	return evs, resp, nil
}

func TestModelFuncName(t *testing.T) {
	if got := (&llm.ModelFunc{}).Name(); got != "func:model" {
		t.Errorf("default Name() = %q, want func:model", got)
	}
	if got := (&llm.ModelFunc{ID: "mine:v2"}).Name(); got != "mine:v2" {
		t.Errorf("Name() = %q, want mine:v2", got)
	}
	var _ llm.Model = (*llm.ModelFunc)(nil)
}

func TestModelFuncStream(t *testing.T) {
	use := llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"file_path":"/a"}`))
	tests := []struct {
		name       string
		resp       *llm.Response
		wantStop   llm.StopReason
		wantRole   llm.Role
		wantEvents []eventSummary
	}{
		{
			name:       "text defaults to end_turn",
			resp:       llm.Reply(llm.Text("hello")),
			wantStop:   llm.StopEndTurn,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventTextDelta, "hello"}, {llm.EventDone, ""}},
		},
		{
			name:       "texts stream as one delta",
			resp:       llm.Reply(llm.Text("a"), llm.Text("b")),
			wantStop:   llm.StopEndTurn,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventTextDelta, "ab"}, {llm.EventDone, ""}},
		},
		{
			name:       "tool use defaults to tool_use",
			resp:       llm.Reply(llm.Text("Reading."), use),
			wantStop:   llm.StopToolUse,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventTextDelta, "Reading."}, {llm.EventDone, ""}},
		},
		{
			name:       "tool use alone has no text delta",
			resp:       llm.Reply(use),
			wantStop:   llm.StopToolUse,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventDone, ""}},
		},
		{
			name:       "empty reply",
			resp:       &llm.Response{},
			wantStop:   llm.StopEndTurn,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventDone, ""}},
		},
		{
			name:       "explicit stop reason kept",
			resp:       &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("cut"), use}}, StopReason: llm.StopMaxTokens},
			wantStop:   llm.StopMaxTokens,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventTextDelta, "cut"}, {llm.EventDone, ""}},
		},
		{
			name:       "missing role defaults to assistant",
			resp:       &llm.Response{Message: llm.Message{Content: []llm.Block{llm.Text("x")}}},
			wantStop:   llm.StopEndTurn,
			wantRole:   llm.RoleAssistant,
			wantEvents: []eventSummary{{llm.EventTextDelta, "x"}, {llm.EventDone, ""}},
		},
		{
			name:       "explicit role kept",
			resp:       &llm.Response{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("x")}}},
			wantStop:   llm.StopEndTurn,
			wantRole:   llm.RoleUser,
			wantEvents: []eventSummary{{llm.EventTextDelta, "x"}, {llm.EventDone, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type ctxKey struct{}
			ctx := context.WithValue(t.Context(), ctxKey{}, "v")
			req := &llm.Request{Model: "m", Agent: "main", Messages: []llm.Message{llm.UserText("hi")}}
			calls := 0
			m := &llm.ModelFunc{Func: func(gotCtx context.Context, gotReq *llm.Request) (*llm.Response, error) {
				calls++
				if gotReq != req {
					t.Errorf("Func got request %p, want %p", gotReq, req)
				}
				if gotCtx.Value(ctxKey{}) != "v" {
					t.Errorf("Func did not get the caller's context")
				}
				return tt.resp, nil
			}}
			evs, resp, err := drain(t, m.Stream(ctx, req))
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if calls != 1 {
				t.Errorf("Func called %d times, want 1", calls)
			}
			if d := cmp.Diff(tt.wantEvents, evs); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if resp == nil {
				t.Fatal("no response in EventDone")
			}
			if resp.StopReason != tt.wantStop {
				t.Errorf("StopReason = %q, want %q", resp.StopReason, tt.wantStop)
			}
			if resp.Message.Role != tt.wantRole {
				t.Errorf("Role = %q, want %q", resp.Message.Role, tt.wantRole)
			}
		})
	}
}

func TestModelFuncError(t *testing.T) {
	want := &llm.Error{Kind: llm.ErrRateLimit, Status: 429, Message: "slow down"}
	m := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) { return nil, want }}
	evs, resp, err := drain(t, m.Stream(t.Context(), &llm.Request{}))
	if !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
	}
	if len(evs) != 0 || resp != nil {
		t.Errorf("a failed call yielded events %v / response %v", evs, resp)
	}
	if _, err := llm.Collect(m.Stream(t.Context(), &llm.Request{})); !llm.Retryable(err) {
		t.Errorf("Collect lost the *Error: %v", err)
	}
}

func TestModelFuncCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	called := false
	m := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		called = true
		return llm.Reply(llm.Text("too late")), nil
	}}
	evs, resp, err := drain(t, m.Stream(ctx, &llm.Request{}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if called {
		t.Error("Func ran although the context was already cancelled")
	}
	if len(evs) != 0 || resp != nil {
		t.Errorf("cancelled stream yielded events %v / response %v", evs, resp)
	}
}

// A consumer that breaks out of the range loop early must not make the
// stream yield again: range-over-func panics if it does.
func TestModelFuncConsumerStopsEarly(t *testing.T) {
	calls := 0
	m := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		calls++
		return llm.Reply(llm.Text("hello"), llm.ToolUse("t1", "LS", nil)), nil
	}}
	tests := []struct {
		name      string
		stopAfter llm.EventType
	}{
		{"after text delta", llm.EventTextDelta},
		{"after done", llm.EventDone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = 0
			var seen []llm.EventType
			for ev, err := range m.Stream(t.Context(), &llm.Request{}) {
				if err != nil {
					t.Fatalf("stream error: %v", err)
				}
				seen = append(seen, ev.Type)
				if ev.Type == tt.stopAfter {
					break
				}
			}
			if seen[len(seen)-1] != tt.stopAfter {
				t.Errorf("events %v, want the last to be %s", seen, tt.stopAfter)
			}
			if calls != 1 {
				t.Errorf("Func called %d times, want 1", calls)
			}
		})
	}
}

func TestModelFuncNilResponse(t *testing.T) {
	m := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) { return nil, nil }}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Stream panicked on a nil response: %v", r)
			}
		}()
		_, err = llm.Collect(m.Stream(t.Context(), &llm.Request{}))
	}()
	if err == nil {
		t.Error("a nil response from Func should be an error")
	}
}

func TestReply(t *testing.T) {
	got := llm.Reply(llm.Text("a"), llm.Text("b"))
	want := &llm.Response{ID: "msg_test", Model: "test", Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("a"), llm.Text("b")}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Reply (-want +got):\n%s", d)
	}
}

func TestParseEffort(t *testing.T) {
	for _, tc := range []struct {
		in      string
		budget  int64 // 0: nil
		wantErr bool
	}{
		{"", 0, false}, {"off", 0, false}, {"none", 0, false}, {"0", 0, false},
		{"low", llm.EffortLowBudget, false}, {"Medium", llm.EffortMediumBudget, false}, {"high", llm.EffortHighBudget, false},
		{"max", llm.EffortHighBudget, false}, {"ultrathink", llm.EffortHighBudget, false}, {"enabled", llm.EffortMediumBudget, false},
		{"8000", 8000, false}, {"12", 0, true}, {"999999", 0, true}, {"loud", 0, true},
	} {
		got, err := llm.ParseEffort(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseEffort(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		var budget int64
		if got != nil {
			budget = got.BudgetTokens
		}
		if budget != tc.budget {
			t.Errorf("ParseEffort(%q) budget = %d, want %d", tc.in, budget, tc.budget)
		}
	}
}

// TestMessageJSONInParts: WriteJSON (and so MarshalJSON) writes the bytes
// encoding/json writes for the message's fields in one call, content []
// when there is none, HTML characters unescaped, tool inputs compacted.
func TestMessageJSONInParts(t *testing.T) {
	type plain struct {
		Role    llm.Role    `json:"role"`
		Content []llm.Block `json:"content"`
	}
	odd := `<b>"x" & y</b>` + "\u2028\t"
	for name, m := range map[string]llm.Message{
		"nil content":   {Role: llm.RoleAssistant},
		"empty content": {Role: llm.RoleUser, Content: []llm.Block{}},
		"blocks": {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text(odd),
			{Type: llm.BlockThinking, Thinking: odd, Signature: "s"},
			llm.ToolUse("toolu_1", "Bash", json.RawMessage("{ \"command\" :\n \"ls <d>\" }")),
			llm.ToolResult("toolu_1", odd, true),
			{Type: llm.BlockToolResult, ToolUseID: "toolu_2", Content: []llm.Block{{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBOR"}}}},
		}},
	} {
		p := plain(m)
		if p.Content == nil {
			p.Content = []llm.Block{}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := m.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if w := strings.TrimSuffix(want.String(), "\n"); got.String() != w {
			t.Errorf("%s: WriteJSON\n got %s\nwant %s", name, got.String(), w)
		}
		if b, err := m.MarshalJSON(); err != nil || string(b) != got.String() {
			t.Errorf("%s: MarshalJSON = %s, %v; want WriteJSON's bytes", name, b, err)
		}
	}
}
