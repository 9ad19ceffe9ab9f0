package subagent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestMaxChildrenPerAgentHoldsUnderConcurrency: with
// maxChildrenPerAgent 1, ten background spawns of one message (run at the
// same time, as the loop runs them) start exactly one child; the limit was
// checked and then acted on, so all ten passed (issue 8, item 10).
func TestMaxChildrenPerAgentHoldsUnderConcurrency(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxChildrenPerAgent: 1},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply("done"), nil
		},
	})
	defer close(release)
	c := h.mainCaller()
	results := make([]tool.Result, 10)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			res, err := h.call(context.Background(), c, "toolu_"+string(rune('a'+i)), AgentInput{Description: "bg", Prompt: "work", RunInBackground: true})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	launched := 0
	for _, r := range results {
		switch {
		case !r.IsError:
			launched++
		case !strings.Contains(resultText(r), "subagents.maxChildrenPerAgent"):
			t.Errorf("refusal does not name the setting: %s", resultText(r))
		}
	}
	if launched != 1 {
		t.Errorf("%d of 10 background spawns started, want 1", launched)
	}
}

// TestForegroundFanOutIsBounded: foreground spawns of one message run at
// most subagents.maxForegroundConcurrent at a time; the rest wait their
// turn (queued, not refused) and all of them finish (issue 8, item 10).
func TestForegroundFanOutIsBounded(t *testing.T) { synctest.Test(t, testForegroundFanOutIsBounded) }

func testForegroundFanOutIsBounded(t *testing.T) {
	const total, limit = 3, 2
	var (
		mu                     sync.Mutex
		arrived, inFlight, top int
		all                    = make(chan struct{})
	)
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxForegroundConcurrent: limit},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			mu.Lock()
			arrived++
			inFlight++
			top = max(top, inFlight)
			if arrived == total {
				close(all)
			}
			mu.Unlock()
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			// Each child waits for every other to have arrived: without a
			// bound they all do at once; with one, the wait runs out (a
			// deadline for liveness only, never the thing tested) and the
			// queued child starts when a place frees.
			select {
			case <-all:
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply("done"), nil
		},
	})
	c := h.mainCaller()
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range total {
		wg.Go(func() {
			res, err := h.call(context.Background(), c, "toolu_"+string(rune('a'+i)), AgentInput{Description: "fg", Prompt: "work"})
			if err == nil && !res.IsError && strings.Contains(resultText(res), "done") {
				ok.Add(1)
			} else {
				t.Errorf("call %d: %v %s", i, err, resultText(res))
			}
		})
	}
	wg.Wait()
	if top > limit {
		t.Errorf("%d foreground children ran at once, want at most %d", top, limit)
	}
	if ok.Load() != total {
		t.Errorf("%d of %d foreground calls finished", ok.Load(), total)
	}
}

// TestQueuedForegroundCallsAreCancelled: cancelling the turn reaches calls
// still waiting for a place, which end without starting anything.
func TestQueuedForegroundCallsAreCancelled(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxForegroundConcurrent: 1},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			if err := g.wait(ctx, req); err != nil {
				return nil, err
			}
			return reply("done"), nil
		},
	})
	c := h.mainCaller()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			res, err := h.call(ctx, c, "toolu_"+string(rune('a'+i)), AgentInput{Description: "fg", Prompt: "work"})
			if err == nil && res.IsError {
				err = errors.New(resultText(res))
			}
			errs <- err
		}()
	}
	recv(t, g.entered, "the first child")
	cancel()
	for range 3 {
		if err := recv(t, errs, "a cancelled call"); err == nil {
			t.Error("a call finished normally after the cancel")
		}
	}
	if n := len(h.requestsOf("general-purpose")); n != 1 {
		t.Errorf("%d children called their model, want only the first", n)
	}
}

// TestQueuedCallWithTimeoutGoesToTheBackground: a call with
// timeout_seconds that is still queued when its time runs out starts in
// the background instead of waiting on.
func TestQueuedCallWithTimeoutGoesToTheBackground(t *testing.T) {
	synctest.Test(t, testQueuedCallWithTimeoutGoesToTheBackground)
}

func testQueuedCallWithTimeoutGoesToTheBackground(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxForegroundConcurrent: 1},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			if firstUserText(req) == "first" {
				if err := g.wait(ctx, req); err != nil {
					return nil, err
				}
			}
			return reply("done"), nil
		},
	})
	c := h.mainCaller()
	first := make(chan tool.Result, 1)
	go func() {
		res, _ := h.call(context.Background(), c, "toolu_a", AgentInput{Description: "fg", Prompt: "first"})
		first <- res
	}()
	recv(t, g.entered, "the first child")
	one := 1
	res := h.mustCall(c, "toolu_b", AgentInput{Description: "queued", Prompt: "second", TimeoutSeconds: &one})
	if m, _ := res.Meta.(map[string]any); res.IsError || m["status"] != "async_launched" {
		t.Errorf("queued call past its timeout: %s", resultText(res))
	}
	close(g.release)
	recv(t, first, "the first call")
}
