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

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type anthropicSSE struct{ Event, Data string }

// parseAnthropicSSE splits a text/event-stream body into its events.
func parseAnthropicSSE(body []byte) []anthropicSSE {
	var out []anthropicSSE
	var cur anthropicSSE
	for _, line := range strings.Split(string(body), "\n") {
		switch {
		case line == "":
			if cur != (anthropicSSE{}) {
				out = append(out, cur)
			}
			cur = anthropicSSE{}
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data += strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

func anthropicPost(t *testing.T, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestAnthropicStreamsLikeTheAPI(t *testing.T) {
	srv := NewAnthropic(t, Queue(Reply{
		Thinking:  "let me think",
		Text:      "Hello, streaming world",
		ToolCalls: []ToolCall{{Name: "Read", Input: map[string]any{"path": "a.go"}}, {ID: "toolu_given", Name: "LS"}},
		Usage:     llm.Usage{InputTokens: 10, OutputTokens: 7, CacheCreationInputTokens: 3, CacheReadInputTokens: 5},
	}))
	resp, body, err := anthropicPost(t, srv.URL, `{"model":"claude-x","stream":true,"max_tokens":10,"messages":[]}`)
	if err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	events := parseAnthropicSSE(body)
	var names []string
	var text, thinking, sig string
	inputs := map[int]string{}
	var start struct {
		Message struct {
			ID, Model string
			Usage     map[string]int64
		}
	}
	var toolIDs []string
	var stop struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		}
		Usage map[string]int64
	}
	for _, ev := range events {
		names = append(names, ev.Event)
		var d struct {
			Type         string
			Index        int
			ContentBlock struct{ Type, ID, Name string } `json:"content_block"`
			Delta        struct {
				Type, Text, Thinking, Signature string
				PartialJSON                     string `json:"partial_json"`
			}
		}
		if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
			t.Fatalf("event %s: data is not JSON: %v\n%s", ev.Event, err, ev.Data)
		}
		if d.Type != ev.Event {
			t.Errorf("event %q carries type %q", ev.Event, d.Type)
		}
		switch ev.Event {
		case "message_start":
			_ = json.Unmarshal([]byte(ev.Data), &start)
		case "message_delta":
			_ = json.Unmarshal([]byte(ev.Data), &stop)
		case "content_block_start":
			if d.ContentBlock.Type == "tool_use" {
				toolIDs = append(toolIDs, d.ContentBlock.ID)
			}
		case "content_block_delta":
			switch d.Delta.Type {
			case "text_delta":
				text += d.Delta.Text
			case "thinking_delta":
				thinking += d.Delta.Thinking
			case "signature_delta":
				sig += d.Delta.Signature
			case "input_json_delta":
				inputs[d.Index] += d.Delta.PartialJSON
			}
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s", diff)
	}
	if text != "Hello, streaming world" || thinking != "let me think" || sig == "" {
		t.Errorf("text %q, thinking %q, signature %q", text, thinking, sig)
	}
	if diff := cmp.Diff(map[int]string{2: `{"path":"a.go"}`, 3: `{}`}, inputs); diff != "" {
		t.Errorf("tool inputs (-want +got):\n%s", diff)
	}
	if len(toolIDs) != 2 || !strings.HasPrefix(toolIDs[0], "toolu_") || toolIDs[1] != "toolu_given" {
		t.Errorf("tool ids = %q", toolIDs)
	}
	if !strings.HasPrefix(start.Message.ID, "msg_") || start.Message.Model != "claude-x" {
		t.Errorf("message_start id %q model %q", start.Message.ID, start.Message.Model)
	}
	wantUsage := map[string]int64{"input_tokens": 10, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 5, "output_tokens": 1}
	if diff := cmp.Diff(wantUsage, start.Message.Usage); diff != "" {
		t.Errorf("message_start usage (-want +got):\n%s", diff)
	}
	if stop.Delta.StopReason != "tool_use" || stop.Usage["output_tokens"] != 7 {
		t.Errorf("message_delta = %+v", stop)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	srv := NewAnthropic(t, Queue(Reply{Text: "hi", Model: "claude-override", Usage: llm.Usage{InputTokens: 2, OutputTokens: 1}}))
	_, body, err := anthropicPost(t, srv.URL, `{"model":"claude-x","max_tokens":10,"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Type, Model string
		StopReason  string `json:"stop_reason"`
		Content     []llm.Block
		Usage       llm.Usage
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("body is not a message: %v\n%s", err, body)
	}
	want := []llm.Block{llm.Text("hi")}
	if diff := cmp.Diff(want, msg.Content); diff != "" || msg.Model != "claude-override" || msg.StopReason != "end_turn" || msg.Usage.InputTokens != 2 {
		t.Errorf("message = %+v (content diff %s)", msg, diff)
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    Reply
		status   int
		wantType string
	}{
		{"rate limit", Reply{Status: 429, Header: map[string]string{"retry-after": "1"}}, 429, "rate_limit_error"},
		{"overloaded", Reply{Status: 529}, 529, "overloaded_error"},
		{"server", Reply{Status: 500}, 500, "api_error"},
		{"auth", Reply{Status: 401}, 401, "authentication_error"},
		{"bad request", Reply{Status: 400, ErrorMessage: "max_tokens: too big"}, 400, "invalid_request_error"},
		{"explicit type", Reply{Status: 503, ErrorType: "overloaded_error"}, 503, "overloaded_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(t, Queue(tt.reply))
			resp, body, err := anthropicPost(t, srv.URL, `{"model":"m","stream":true}`)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			var e struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != tt.wantType || e.Error.Message == "" {
				t.Errorf("body = %s (err %v), want an error of type %s", body, err, tt.wantType)
			}
			if tt.reply.ErrorMessage != "" && e.Error.Message != tt.reply.ErrorMessage {
				t.Errorf("message = %q, want %q", e.Error.Message, tt.reply.ErrorMessage)
			}
			for k, v := range tt.reply.Header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestAnthropicCutStream(t *testing.T) {
	tests := []struct {
		name     string
		cutAfter int
		want     int
	}{
		{"after three events", 3, 3},
		{"past the end keeps message_stop back", 100, 8}, // 9 events in all
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(t, Queue(Reply{Text: "abcdef", CutAfter: tt.cutAfter}))
			_, body, err := anthropicPost(t, srv.URL, `{"model":"m","stream":true}`)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("reading a cut stream: err = %v, want unexpected EOF", err)
			}
			events := parseAnthropicSSE(body)
			if len(events) != tt.want {
				t.Errorf("got %d events before the cut, want %d", len(events), tt.want)
			}
			if bytes.Contains(body, []byte("message_stop")) {
				t.Errorf("a cut stream carried message_stop:\n%s", body)
			}
		})
	}
}

func TestAnthropicErrorEventMidStream(t *testing.T) {
	srv := NewAnthropic(t, Queue(Reply{Text: "abc", Status: 529, CutAfter: 4}))
	resp, body, err := anthropicPost(t, srv.URL, `{"model":"m","stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("status = %d, want 200 (the error comes inside the stream)", resp.StatusCode)
	}
	events := parseAnthropicSSE(body)
	if len(events) != 5 {
		t.Fatalf("got %d events, want 4 and an error:\n%s", len(events), body)
	}
	last := events[4]
	if last.Event != "error" || !strings.Contains(last.Data, `"overloaded_error"`) {
		t.Errorf("last event = %+v, want an overloaded_error event", last)
	}
}

func TestAnthropicWaitAndRecording(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	srv := NewAnthropic(t, func(Request) Reply {
		close(arrived)
		return Reply{Text: "done", Wait: release}
	})
	got := make(chan []byte, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- b
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("request never reached the handler")
	}
	select {
	case b := <-got:
		t.Fatalf("reply written before Wait was released: %s", b)
	default:
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].End.IsZero() {
		t.Fatalf("while held: requests = %+v, want one unfinished", reqs)
	}
	close(release)
	select {
	case b := <-got:
		if !bytes.Contains(b, []byte(`"done"`)) {
			t.Errorf("reply = %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reply never came after Wait was released")
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages" || string(r.Body) != `{"model":"m"}` || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("recorded %+v", r)
	}
	if r.Start.IsZero() || r.End.Before(r.Start) {
		t.Errorf("Start %v End %v", r.Start, r.End)
	}
}

func TestAnthropicUnknownPath(t *testing.T) {
	srv := NewAnthropic(t, Queue())
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404", resp.StatusCode)
	}
}
