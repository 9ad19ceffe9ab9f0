package loop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// A message's parallel calls run maxParallelCalls at a time, every one of
// them, each result in its place: the first maxParallelCalls hold their
// places until the test sees them all running, and none more starts.
func TestBatchBoundsCallsAtOnce(t *testing.T) {
	const n = 3 * maxParallelCalls
	var (
		mu        sync.Mutex
		now, most int
	)
	full, gate := make(chan struct{}), make(chan struct{})
	// Once: after the gate opens, every later call that refills the
	// places meets the condition again (a second close would panic with
	// mu held, which the loop's recover turns into a deadlock).
	fill := sync.OnceFunc(func() { close(full) })
	work := echo("work", true, func(context.Context, echoIn) error {
		mu.Lock()
		now++
		most = max(most, now)
		if now == maxParallelCalls && most == maxParallelCalls {
			fill()
		}
		mu.Unlock()
		<-gate
		mu.Lock()
		now--
		mu.Unlock()
		return nil
	})
	go func() {
		select {
		case <-full:
		case <-time.After(10 * time.Second):
		}
		close(gate)
	}()
	out := runCalls(t, n, work)
	if most != maxParallelCalls {
		t.Errorf("%d calls ran at once, want %d", most, maxParallelCalls)
	}
	checkResults(t, out, n, "work")
}

// A call that waits for something else (a subagent, a person) gives its
// place up: a batch of such calls larger than the bound, each waiting for
// all of them to have started, completes.
func TestBatchYieldingCallsAllRun(t *testing.T) {
	const n = 2 * maxParallelCalls
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	wait := echo("wait", true, func(ctx context.Context, _ echoIn) error {
		tool.Yield(ctx)
		tool.Yield(ctx) // a second call does nothing
		started.Done()
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("not every call of the batch started: the bound held places of calls that yielded")
		}
	})
	checkResults(t, runCalls(t, n, wait), n, "wait")
}

// runCalls runs one message of n parallel calls of tl and returns the
// results the next request carried.
func runCalls(t *testing.T, n int, tl tool.Tool) []llm.Block {
	t.Helper()
	var uses []llm.Block
	for i := range n {
		uses = append(uses, use(fmt.Sprintf("t%d", i), tl.Info().Name, fmt.Sprintf(`{"text":"%d"}`, i)))
	}
	cfg := Config{Model: scripted(llm.Reply(uses...), llm.Reply(llm.Text("done"))), Tools: set(t, tl)}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	return lastResults(out)
}

func checkResults(t *testing.T, results []llm.Block, n int, name string) {
	t.Helper()
	if len(results) != n {
		t.Fatalf("%d results, want %d", len(results), n)
	}
	for i, r := range results {
		if want := fmt.Sprintf("%s:%d", name, i); r.IsError || r.ToolUseID != fmt.Sprintf("t%d", i) || r.ResultText() != want {
			t.Fatalf("result %d = %+v, want %s", i, r, want)
		}
	}
}

// launcher is a safe AccessAgent tool: what its calls launch starts once
// their batch has launched all it launches (tool.AfterLaunches).
func launcher(name string, run func(ctx context.Context, in echoIn) error) tool.Tool {
	return tool.New(tool.Info{Name: name, Description: "launches", Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, env tool.Env, in echoIn) (tool.Result, error) {
			if err := run(ctx, in); err != nil {
				return tool.Result{}, err
			}
			return tool.Text(name + ":" + in.Text), nil
		})
}

// What a batch's launching calls launch starts once every one of them
// has returned or yielded — not while one is still launching, and without
// waiting for a call of another tool (a Read beside them) or for a call
// that waits on what it launched.
func TestBatchHoldsLaunchesUntilTheLastLaunch(t *testing.T) {
	var (
		started     = make(chan struct{}) // what "quick" launched started
		slowEntered = make(chan struct{})
		slowGo      = make(chan struct{})
		quickDone   = make(chan struct{})
	)
	deadline := func(ch <-chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%s never happened", what)
		}
	}
	quick := launcher("quick", func(ctx context.Context, _ echoIn) error {
		tool.AfterLaunches(ctx, func() { close(started) })
		close(quickDone)
		return nil
	})
	slow := launcher("slow", func(ctx context.Context, _ echoIn) error {
		close(slowEntered)
		return deadline(slowGo, "the test's release of the slow launch")
	})
	// Waits for what it launched, yielding first, as a foreground Agent
	// call does: the batch must not wait for it.
	waiting := launcher("waiting", func(ctx context.Context, _ echoIn) error {
		tool.Yield(ctx)
		return deadline(started, "the start of what the batch launched")
	})
	read := echo("read", true, func(context.Context, echoIn) error {
		return deadline(started, "the start of what the batch launched")
	})
	go func() {
		if deadline(slowEntered, "") == nil && deadline(quickDone, "") == nil {
			select {
			case <-started:
				t.Error("what the batch launched started while one of its calls was still launching")
			default:
			}
		}
		close(slowGo)
	}()
	uses := []llm.Block{use("t0", "quick", `{"text":"0"}`), use("t1", "slow", `{"text":"1"}`), use("t2", "waiting", `{"text":"2"}`), use("t3", "read", `{"text":"3"}`)}
	cfg := Config{Model: scripted(llm.Reply(uses...), llm.Reply(llm.Text("done"))), Tools: set(t, quick, slow, waiting, read)}
	out, err := Run(context.Background(), cfg, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range lastResults(out) {
		if r.IsError {
			t.Errorf("call %d: %s", i, r.ResultText())
		}
	}
}
