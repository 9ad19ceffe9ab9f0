package openai_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/openai"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

func limitedModel(t *testing.T, srv *testkit.OpenAIServer, l guard.Limits) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL, Getenv: env(), HTTPClient: client(t), Limits: l})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// collectWithin is collect, failing the test if the stream is still going
// after a deadline far beyond the limits under test: a hang is the bug.
func collectWithin(t *testing.T, m *openai.Model) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	type result struct {
		evs  []llm.Event
		resp *llm.Response
		err  error
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		var r result
		for ev, err := range m.Stream(ctx, hello()) {
			if err != nil {
				r.err = err
				break
			}
			if ev.Type == llm.EventDone {
				r.resp = ev.Response
				continue
			}
			r.evs = append(r.evs, ev)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.evs, r.resp, r.err
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		t.Fatal("the stream hung: no time limit ended it")
		return nil, nil, nil
	}
}

func TestStallsEndInATimeout(t *testing.T) {
	limits := guard.Limits{FirstByte: 200 * time.Millisecond, Idle: 100 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		reply      testkit.Reply
		setting    string
		wantDeltas bool
	}{
		{"no response", testkit.Reply{Text: "hi", Stall: testkit.StallNoResponse}, guard.SettingFirstByte, false},
		{"headers only", testkit.Reply{Text: "hi", Stall: testkit.StallMidStream}, guard.SettingFirstByte, false},
		{"after the role chunk", testkit.Reply{Text: "hi", Stall: testkit.StallMidStream, StallAfter: 1}, guard.SettingIdle, false},
		{"after deltas", testkit.Reply{Text: "hello there", Stall: testkit.StallMidStream, StallAfter: 3}, guard.SettingIdle, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(tc.reply))
			evs, _, err := collectWithin(t, limitedModel(t, srv, limits))
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != llm.ErrTimeout {
				t.Fatalf("error = %v, want an llm.ErrTimeout", err)
			}
			if !llm.Retryable(err) {
				t.Errorf("a stall is not retryable: %v", err)
			}
			if !strings.Contains(err.Error(), tc.setting) {
				t.Errorf("error %q does not name %s", err, tc.setting)
			}
			if got := len(evs) > 0; got != tc.wantDeltas {
				t.Errorf("%d events before the error, want some: %v", len(evs), tc.wantDeltas)
			}
		})
	}
}

func TestReplyTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply testkit.Reply
	}{
		{"text", testkit.Reply{Text: strings.Repeat("x", 5000), DeltaSize: 100}},
		{"reasoning", testkit.Reply{Thinking: strings.Repeat("x", 5000), Text: "ok", DeltaSize: 100}},
		{"tool arguments", testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Write", Input: map[string]any{"content": strings.Repeat("x", 5000)}}}, DeltaSize: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewOpenAI(t, testkit.Queue(tc.reply))
			_, _, err := collectWithin(t, limitedModel(t, srv, guard.Limits{MaxReplyBytes: 1000}))
			var tl *guard.TooLargeError
			if !errors.As(err, &tl) || !strings.Contains(err.Error(), guard.SettingMaxReplyBytes) {
				t.Fatalf("error = %v, want one naming %s", err, guard.SettingMaxReplyBytes)
			}
			if llm.Retryable(err) {
				t.Errorf("an oversized reply would come again: it must not be retried: %v", err)
			}
		})
	}
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", 1000), DeltaSize: 100}))
	if _, _, err := collectWithin(t, limitedModel(t, srv, guard.Limits{MaxReplyBytes: 1000})); err != nil {
		t.Errorf("a reply of exactly the limit failed: %v", err)
	}
}

// allocated is how many bytes streaming a text of size bytes, in deltas of
// 256 bytes, allocates (the fake server's share included).
func allocated(t *testing.T, size int) uint64 {
	srv := testkit.NewOpenAI(t, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", size), DeltaSize: 256}))
	m := limitedModel(t, srv, guard.Limits{MaxReplyBytes: 1 << 30})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, resp, err := collect(t, m, t.Context(), hello())
	runtime.ReadMemStats(&after)
	if err != nil || resp == nil || len(resp.Message.Text()) != size {
		t.Fatalf("streaming %d bytes: %v", size, err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// A reply's cost must grow with its size, not with its square.
func TestLargeReplyAllocatesLinearly(t *testing.T) {
	small, large := allocated(t, 256<<10), allocated(t, 1<<20)
	ratio := float64(large) / float64(small)
	t.Logf("256 KiB: %d bytes allocated, 1 MiB: %d (%.1f×)", small, large, ratio)
	if ratio > 6 {
		t.Errorf("4× the reply allocated %.1f× as much: not linear", ratio)
	}
}

// BenchmarkLargeReply streams a long text reply, in deltas of 64 bytes,
// from memory through the adapter: the time per byte must not grow with
// the reply's size.
func BenchmarkLargeReply(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		b.Run(guard.Size(int64(size)), func(b *testing.B) {
			srv := testkit.NewOpenAI(b, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", size), DeltaSize: 64}))
			client := testkit.Canned(b, srv.URL+"/chat/completions", `{"model":"test-model","stream":true,"messages":[]}`)
			m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL, Getenv: env(), HTTPClient: client, Limits: guard.Limits{MaxReplyBytes: 1 << 30}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, err := range m.Stream(b.Context(), hello()) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
