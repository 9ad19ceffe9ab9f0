package testkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm"
)

// openAINoLeaks checks, when the test ends (after the server is closed),
// that no goroutine is left behind: the package's TestMain would catch a
// leak too, but not say which test made it.
func openAINoLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// openAIPost posts body to the fake server with a client of its own, so no
// idle connection outlives the test.
func openAIPost(t *testing.T, s *OpenAIServer, path, body string) (*http.Response, []byte, error) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// openAIData returns the payloads of the "data:" lines of an SSE body.
func openAIData(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		ev = bytes.TrimSpace(ev)
		if len(ev) == 0 {
			continue
		}
		d, ok := bytes.CutPrefix(ev, []byte("data: "))
		if !ok {
			t.Fatalf("SSE event %q is not a data line", ev)
		}
		out = append(out, string(d))
	}
	return out
}

// openAIChunk is the shape of a chat.completion.chunk, with tool call
// fields as pointers so a test can tell which piece carried them.
type openAIChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      *string `json:"name"`
					Arguments string  `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func TestOpenAIStreamShape(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{
		Thinking: "let me think",
		Text:     "Hello, world",
		ToolCalls: []ToolCall{
			{ID: "call_a", Name: "Read", Input: map[string]any{"path": "a.go"}},
			{Name: "Grep", Input: map[string]any{"pattern": "func main"}},
		},
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 7, CacheReadInputTokens: 90},
	}))
	resp, body, err := openAIPost(t, s, "/chat/completions",
		`{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	data := openAIData(t, body)
	if got := data[len(data)-1]; got != "[DONE]" {
		t.Fatalf("last data line = %q, want [DONE]", got)
	}
	var chunks []openAIChunk
	for _, d := range data[:len(data)-1] {
		var c openAIChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if c.Object != "chat.completion.chunk" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Model != "gpt-test" {
			t.Errorf("chunk header = %q %q %q, want chat.completion.chunk, chatcmpl-…, gpt-test", c.Object, c.ID, c.Model)
		}
		if c.ID != chunks0ID(chunks, c.ID) {
			t.Errorf("chunk id %q differs from the first chunk's", c.ID)
		}
		chunks = append(chunks, c)
	}
	if got := chunks[0].Choices[0].Delta.Role; got != "assistant" {
		t.Errorf("first delta role = %q, want assistant", got)
	}

	var thinking, text []string
	type call struct{ ID, Type, Name, Args string }
	var calls []call
	argPieces := map[int]int{}
	var finish []string
	for _, c := range chunks[1 : len(chunks)-1] {
		if len(c.Choices) != 1 {
			t.Fatalf("chunk has %d choices, want 1", len(c.Choices))
		}
		ch := c.Choices[0]
		if ch.Delta.ReasoningContent != "" {
			thinking = append(thinking, ch.Delta.ReasoningContent)
		}
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			text = append(text, *ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.ID != nil {
				if tc.Index != len(calls) || tc.Type == nil || tc.Function.Name == nil {
					t.Fatalf("tool call opening piece %+v lacks index/type/name", tc)
				}
				calls = append(calls, call{ID: *tc.ID, Type: *tc.Type, Name: *tc.Function.Name})
				continue
			}
			if tc.Function.Name != nil {
				t.Errorf("argument piece of call %d repeats the name", tc.Index)
			}
			calls[tc.Index].Args += tc.Function.Arguments
			argPieces[tc.Index]++
		}
		if ch.FinishReason != nil {
			finish = append(finish, *ch.FinishReason)
		}
	}
	if len(thinking) < 2 || strings.Join(thinking, "") != "let me think" {
		t.Errorf("reasoning_content deltas = %q, want several joining to %q", thinking, "let me think")
	}
	if len(text) < 2 || strings.Join(text, "") != "Hello, world" {
		t.Errorf("content deltas = %q, want several joining to %q", text, "Hello, world")
	}
	if len(calls) != 2 || !strings.HasPrefix(calls[1].ID, "call_") {
		t.Fatalf("tool calls = %+v, want two, the second with a generated call_ id", calls)
	}
	calls[1].ID = "generated"
	wantCalls := []call{
		{ID: "call_a", Type: "function", Name: "Read", Args: `{"path":"a.go"}`},
		{ID: "generated", Type: "function", Name: "Grep", Args: `{"pattern":"func main"}`},
	}
	if d := cmp.Diff(wantCalls, calls); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if argPieces[0] < 2 || argPieces[1] < 2 {
		t.Errorf("argument pieces per call = %v, want several each", argPieces)
	}
	if d := cmp.Diff([]string{"tool_calls"}, finish); d != "" {
		t.Errorf("finish reasons (-want +got):\n%s", d)
	}

	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil {
		t.Fatalf("last chunk = %+v, want no choices and a usage", last)
	}
	u := *last.Usage
	if u.PromptTokens != 100 || u.CompletionTokens != 7 || u.TotalTokens != 107 || u.PromptTokensDetails.CachedTokens != 90 {
		t.Errorf("usage = %+v, want prompt 100 (cached 90), completion 7, total 107", u)
	}
}

// chunks0ID returns the first chunk's id, or def when there is none yet.
func chunks0ID(chunks []openAIChunk, def string) string {
	if len(chunks) == 0 {
		return def
	}
	return chunks[0].ID
}

func TestOpenAIStreamWithoutUsage(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{Text: "hi", Usage: llm.Usage{InputTokens: 3}}))
	_, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range openAIData(t, body) {
		if strings.Contains(d, `"usage"`) {
			t.Errorf("chunk %s carries usage, but the request did not ask for it", d)
		}
	}
}

func TestOpenAIFinishReason(t *testing.T) {
	openAINoLeaks(t)
	tests := []struct {
		reply Reply
		want  string
	}{
		{Reply{Text: "x"}, "stop"},
		{Reply{ToolCalls: []ToolCall{{Name: "a"}}}, "tool_calls"},
		{Reply{Text: "x", StopReason: "end_turn"}, "stop"},
		{Reply{ToolCalls: []ToolCall{{Name: "a"}}, StopReason: "tool_use"}, "tool_calls"},
		{Reply{Text: "x", StopReason: "max_tokens"}, "length"},
		{Reply{Text: "x", StopReason: "content_filter"}, "content_filter"},
	}
	for _, tt := range tests {
		s := NewOpenAI(t, Queue(tt.reply))
		_, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
		if err != nil {
			t.Fatal(err)
		}
		data := openAIData(t, body)
		var c openAIChunk
		if err := json.Unmarshal([]byte(data[len(data)-2]), &c); err != nil {
			t.Fatal(err)
		}
		if got := c.Choices[0].FinishReason; got == nil || *got != tt.want {
			t.Errorf("StopReason %q: finish_reason = %v, want %q", tt.reply.StopReason, got, tt.want)
		}
	}
}

func TestOpenAINonStreaming(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{
		Text:      "done",
		ToolCalls: []ToolCall{{ID: "call_1", Name: "Bash", Input: map[string]any{"command": "ls"}}},
		Usage:     llm.Usage{InputTokens: 5, OutputTokens: 2, CacheReadInputTokens: 1},
		Model:     "served-model",
	}))
	resp, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role      string `json:"role"`
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int64 `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	m := got.Choices[0].Message
	if got.Object != "chat.completion" || got.Model != "served-model" || m.Role != "assistant" || m.Content != "done" ||
		got.Choices[0].FinishReason != "tool_calls" || got.Usage.PromptTokens != 6 || got.Usage.PromptTokensDetails.CachedTokens != 1 {
		t.Errorf("completion = %+v", got)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_1" || m.ToolCalls[0].Type != "function" ||
		m.ToolCalls[0].Function.Name != "Bash" || m.ToolCalls[0].Function.Arguments != `{"command":"ls"}` {
		t.Errorf("tool calls = %+v", m.ToolCalls)
	}
}

func TestOpenAIErrorStatus(t *testing.T) {
	openAINoLeaks(t)
	tests := []struct {
		reply            Reply
		wantType         string
		wantCode         any
		wantMsg          string
		wantHeader, want string
	}{
		{Reply{Status: 429, ErrorMessage: "slow down", Header: map[string]string{"retry-after": "3"}}, "requests", "rate_limit_exceeded", "slow down", "retry-after", "3"},
		{Reply{Status: 500}, "server_error", nil, "Internal Server Error", "", ""},
		{Reply{Status: 401}, "invalid_request_error", "invalid_api_key", "Unauthorized", "", ""},
		{Reply{Status: 400, ErrorType: "custom_type", ErrorMessage: "bad"}, "custom_type", nil, "bad", "", ""},
	}
	for _, tt := range tests {
		s := NewOpenAI(t, Queue(tt.reply))
		resp, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.reply.Status {
			t.Errorf("status = %d, want %d", resp.StatusCode, tt.reply.Status)
		}
		if tt.wantHeader != "" && resp.Header.Get(tt.wantHeader) != tt.want {
			t.Errorf("header %s = %q, want %q", tt.wantHeader, resp.Header.Get(tt.wantHeader), tt.want)
		}
		var got struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("error body %s: %v", body, err)
		}
		want := map[string]any{"message": tt.wantMsg, "type": tt.wantType, "code": tt.wantCode, "param": nil}
		if d := cmp.Diff(want, got.Error); d != "" {
			t.Errorf("status %d: error (-want +got):\n%s", tt.reply.Status, d)
		}
	}
}

func TestOpenAIHeaderOnSuccess(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{Text: "x", Header: map[string]string{"x-ratelimit-remaining-requests": "9"}}))
	resp, _, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("x-ratelimit-remaining-requests"); got != "9" {
		t.Errorf("header = %q, want 9", got)
	}
}

func TestOpenAICutAfter(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{Text: "a long enough text", CutAfter: 2}))
	_, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error = %v, want unexpected EOF", err)
	}
	data := openAIData(t, body)
	if len(data) != 2 {
		t.Errorf("got %d data lines before the cut, want 2: %q", len(data), data)
	}
	for _, d := range data {
		if d == "[DONE]" {
			t.Errorf("a cut stream sent [DONE]")
		}
	}
}

func TestOpenAIMidStreamError(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue(Reply{Text: "partial answer", Status: 503, ErrorMessage: "engine overloaded", CutAfter: 2}))
	resp, body, err := openAIPost(t, s, "/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("status = %d, want 200 (the failure comes mid-stream)", resp.StatusCode)
	}
	data := openAIData(t, body)
	if len(data) != 3 || !strings.Contains(data[2], `"error"`) || !strings.Contains(data[2], "engine overloaded") {
		t.Errorf("data lines = %q, want two chunks and an error event", data)
	}
}

func TestOpenAIWaitAndRecord(t *testing.T) {
	openAINoLeaks(t)
	release := make(chan struct{})
	arrived := make(chan struct{})
	s := NewOpenAI(t, func(Request) Reply {
		close(arrived)
		return Reply{Text: "x", Wait: release}
	})
	done := make(chan error, 1)
	go func() {
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		resp, err := client.Post(s.URL+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	deadline := time.After(10 * time.Second)
	select {
	case <-arrived:
	case <-deadline:
		t.Fatal("the request never reached the handler")
	}
	released := time.Now()
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-deadline:
		t.Fatal("the reply never came after Wait was released")
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.JSON()["model"] != "m" {
		t.Errorf("recorded request = %s %s %v", r.Method, r.Path, r.JSON())
	}
	if r.Start.After(released) || r.End.Before(released) {
		t.Errorf("request ran %v..%v, want it to start before Wait was released (%v) and end after", r.Start, r.End, released)
	}
}

// A handler parked on Wait must not keep the server from closing when the
// test ends, nor outlive it.
func TestOpenAIWaitReleasedByCleanup(t *testing.T) {
	openAINoLeaks(t)
	arrived := make(chan struct{})
	done := make(chan error, 1)
	t.Run("inner", func(t *testing.T) {
		s := NewOpenAI(t, func(Request) Reply {
			close(arrived)
			return Reply{Text: "x", Wait: make(chan struct{})}
		})
		go func() {
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			resp, err := client.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		<-arrived
	})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the parked request was not released when the server closed")
	}
}

func TestOpenAIUnknownPath(t *testing.T) {
	openAINoLeaks(t)
	s := NewOpenAI(t, Queue())
	resp, body, err := openAIPost(t, s, "/completions", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 404 || !strings.Contains(string(body), "/v1/chat/completions") {
		t.Errorf("status %d body %s, want a 404 naming the served path", resp.StatusCode, body)
	}
}
