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
