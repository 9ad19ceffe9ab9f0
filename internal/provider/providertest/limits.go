package providertest

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// Adapter is one provider adapter under test.
type Adapter struct {
	// New starts a fake server of the adapter's protocol answering h and
	// returns a model that talks to it under the limits l.
	New func(t testing.TB, h testkit.Handler, l guard.Limits) llm.Model
	// AfterHeader is how many stream events the server sends before the
	// first content delta (Anthropic's message_start, OpenAI's role
	// chunk); AfterDeltas a count after which some deltas have gone out.
	AfterHeader, AfterDeltas int
}

// TestLimits checks the stream limits of DESIGN §17: a stall at any point
// ends in a retryable timeout naming its setting, a reply over the size
// limit in an error naming it that is not retried, and reading a reply
// costs memory linear in its size.
func TestLimits(t *testing.T, a Adapter) {
	t.Run("stalls end in a timeout", func(t *testing.T) {
		limits := guard.Limits{FirstByte: 200 * time.Millisecond, Idle: 100 * time.Millisecond}
		for _, tc := range []struct {
			name       string
			reply      testkit.Reply
			setting    string
			wantDeltas bool
		}{
			{"no response", testkit.Reply{Text: "hi", Stall: testkit.StallNoResponse}, guard.SettingFirstByte, false},
			{"headers only", testkit.Reply{Text: "hi", Stall: testkit.StallMidStream}, guard.SettingFirstByte, false},
			{"after the stream's header", testkit.Reply{Text: "hi", Stall: testkit.StallMidStream, StallAfter: a.AfterHeader}, guard.SettingIdle, false},
			{"after deltas", testkit.Reply{Text: "hello there", Stall: testkit.StallMidStream, StallAfter: a.AfterDeltas}, guard.SettingIdle, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				evs, _, err := within(t, a.New(t, testkit.Queue(tc.reply), limits))
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
	})

	t.Run("reply too large", func(t *testing.T) {
		limits := guard.Limits{MaxReplyBytes: 1000}
		for _, tc := range []struct {
			name  string
			reply testkit.Reply
		}{
			{"text", testkit.Reply{Text: strings.Repeat("x", 5000), DeltaSize: 100}},
			{"thinking", testkit.Reply{Thinking: strings.Repeat("x", 5000), Text: "ok", DeltaSize: 100}},
			{"tool input", testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Write", Input: map[string]any{"content": strings.Repeat("x", 5000)}}}, DeltaSize: 100}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := within(t, a.New(t, testkit.Queue(tc.reply), limits))
				var tl *guard.TooLargeError
				if !errors.As(err, &tl) || !strings.Contains(err.Error(), guard.SettingMaxReplyBytes) {
					t.Fatalf("error = %v, want one naming %s", err, guard.SettingMaxReplyBytes)
				}
				if llm.Retryable(err) {
					t.Errorf("an oversized reply would come again: it must not be retried: %v", err)
				}
			})
		}
		exact := testkit.Queue(testkit.Reply{Text: strings.Repeat("x", 1000), DeltaSize: 100})
		if _, _, err := within(t, a.New(t, exact, limits)); err != nil {
			t.Errorf("a reply of exactly the limit failed: %v", err)
		}
	})

	// Joining deltas by string concatenation copies everything received
	// so far at every delta: 4× the reply would cost 16× the memory.
	t.Run("large reply allocates linearly", func(t *testing.T) {
		small, large := allocated(t, a, 256<<10), allocated(t, a, 1<<20)
		ratio := float64(large) / float64(small)
		t.Logf("256 KiB: %d bytes allocated, 1 MiB: %d (%.1f×)", small, large, ratio)
		if ratio > 6 {
			t.Errorf("4× the reply allocated %.1f× as much (%d vs %d bytes): not linear", ratio, large, small)
		}
	})
}

// allocated is how many bytes streaming a text of size bytes, in deltas of
// 256 bytes, allocates (the fake server's share included).
func allocated(t *testing.T, a Adapter, size int) uint64 {
	m := a.New(t, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", size), DeltaSize: 256}), guard.Limits{MaxReplyBytes: 1 << 30})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, resp, err := drain(t.Context(), m)
	runtime.ReadMemStats(&after)
	if err != nil || resp == nil || len(resp.Message.Text()) != size {
		t.Fatalf("streaming %d bytes: %v", size, err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// within drains the stream, failing the test if it is still going after a
// deadline far beyond the limits under test: a hang is the bug.
func within(t *testing.T, m llm.Model) ([]llm.Event, *llm.Response, error) {
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
		evs, resp, err := drain(ctx, m)
		done <- result{evs, resp, err}
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

// drain reads a stream: its events before the final one, the final
// response, and the error that ended it.
func drain(ctx context.Context, m llm.Model) ([]llm.Event, *llm.Response, error) {
	var (
		evs  []llm.Event
		resp *llm.Response
	)
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return evs, resp, err
		}
		if ev.Type == llm.EventDone {
			resp = ev.Response
			continue
		}
		evs = append(evs, ev)
	}
	return evs, resp, nil
}
