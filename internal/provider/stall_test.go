package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// A stall is a transient fault: the resolved model retries it with the
// policy and, when every attempt stalls, gives up with one line naming
// the limit and its setting.
func TestStallsAreRetried(t *testing.T) {
	stall := testkit.Reply{Text: "never finished", Stall: testkit.StallMidStream, StallAfter: 2}
	for _, tc := range []struct {
		name    string
		replies []testkit.Reply
		wantErr string
		retries int
	}{
		{name: "stall then answer", replies: []testkit.Reply{stall, {Text: "done"}}, retries: 1},
		{name: "every attempt stalls", replies: []testkit.Reply{stall, stall, stall}, retries: 2,
			wantErr: "gave up after 3 attempts: anthropic: timeout: the stream fell silent for 250ms (limits.streamIdleSeconds)"},
		{name: "never answers", replies: []testkit.Reply{{Stall: testkit.StallNoResponse}, {Stall: testkit.StallNoResponse}, {Stall: testkit.StallNoResponse}}, retries: 2,
			wantErr: "gave up after 3 attempts: anthropic: timeout: no response within 500ms of sending the request (limits.streamFirstByteSeconds)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(tc.replies...))
			m, err := Resolve("anthropic:claude-test", Config{
				Endpoints: map[string]Endpoint{"anthropic": {BaseURL: srv.URL, APIKey: "k"}},
				Getenv:    func(string) string { return "" },
				Retry:     RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }},
				Limits:    guard.Limits{FirstByte: 500 * time.Millisecond, Idle: 250 * time.Millisecond}, // wide enough for a loaded machine: a healthy reply must never trip them
			})
			if err != nil {
				t.Fatal(err)
			}
			retries := 0
			var text string
			var failed error
			for ev, err := range m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}) {
				if err != nil {
					failed = err
					break
				}
				switch ev.Type {
				case llm.EventRetry:
					retries++
					if !strings.Contains(ev.Delta, "limits.stream") {
						t.Errorf("retry notice %q does not name the setting", ev.Delta)
					}
				case llm.EventDone:
					text = ev.Response.Message.Text()
				}
			}
			if retries != tc.retries {
				t.Errorf("%d retries, want %d", retries, tc.retries)
			}
			if tc.wantErr == "" {
				if failed != nil || text != "done" {
					t.Errorf("got %q, %v; want the second attempt's answer", text, failed)
				}
				return
			}
			if failed == nil || !strings.HasPrefix(failed.Error(), tc.wantErr) || strings.Contains(failed.Error(), "\n") {
				t.Errorf("error = %v\nwant one line starting %q", failed, tc.wantErr)
			}
		})
	}
}
