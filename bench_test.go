package cadre_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// The subagent benchmarks run through the SDK rather than inside
// internal/subagent: a spawn's cost is spread over the runtime's wiring
// (the loop, the session store and transcripts, the event bus, the tool
// pool), and cadre.New is the one place that wires it as the product does.
// The model is a zero-latency llm.ModelFunc, so every figure is cadre's.

// fanOut is a zero-latency model for one main message that spawns n
// general-purpose children: the main agent's first turn calls Agent n
// times, every child answers at once, and the main agent's second turn
// ends the run, saying whether every child's result came back.
type fanOut struct {
	calls []llm.Block
	// onSpawn, if set, runs as the main agent's reply with the Agent calls
	// is handed back to cadre.
	onSpawn func()
	// onChild, if set, runs at each child's model call before it answers.
	onChild    func(ctx context.Context) error
	childCalls atomic.Int64
}

func newFanOut(n int) *fanOut {
	f := &fanOut{}
	for i := range n {
		in := fmt.Sprintf(`{"description":"part %d","prompt":"Do part %d of the job and report back."}`, i, i)
		f.calls = append(f.calls, llm.ToolUse(fmt.Sprintf("toolu_%03d", i), "Agent", json.RawMessage(in)))
	}
	return f
}

const childAnswer = "CHILD-OK"

func (f *fanOut) model(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req.Agent != "main" {
		f.childCalls.Add(1)
		if f.onChild != nil {
			if err := f.onChild(ctx); err != nil {
				return nil, err
			}
		}
		return llm.Reply(llm.Text(childAnswer)), nil
	}
	if len(req.Messages) > 1 {
		// The Agent results are back: the answer says how many succeeded,
		// so a run whose children failed cannot pass for a good one.
		ok := 0
		for _, b := range req.Messages[len(req.Messages)-1].Content {
			if b.Type == llm.BlockToolResult && !b.IsError && strings.Contains(b.ResultText(), childAnswer) {
				ok++
			}
		}
		return llm.Reply(llm.Text(fmt.Sprintf("%d agents answered", ok))), nil
	}
	if len(f.calls) == 0 {
		return llm.Reply(llm.Text("0 agents answered")), nil
	}
	if f.onSpawn != nil {
		f.onSpawn()
	}
	return llm.Reply(slices.Clone(f.calls)...), nil
}

// open starts a runtime on f's model in a private project and state dir.
func (f *fanOut) open(b testing.TB) *cadre.Runtime {
	b.Helper()
	home, dir := b.TempDir(), b.TempDir()
	// The process works in the project too: a file a run writes relative
	// to the process's directory must not land in the repository.
	b.Chdir(dir)
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd:    dir,
		LLM:    &llm.ModelFunc{ID: "bench:zero-latency", Func: f.model},
		Getenv: testkit.Home(home),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	return rt
}

// run runs one main message to its end and checks that every child's
// result reached the main agent: a figure from a run that did not do its
// work would mean nothing. It returns an error rather than failing b so
// that it may run off the benchmark's goroutine.
func (f *fanOut) run(ctx context.Context, rt *cadre.Runtime) error {
	var res *cadre.ResultInfo
	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: "Split the job between agents."}) {
		if err != nil {
			return err
		}
		if ev.Type == cadre.EventResult {
			res = ev.Result
		}
	}
	want := fmt.Sprintf("%d agents answered", len(f.calls))
	switch {
	case res == nil:
		return errors.New("the run ended without a result event")
	case res.IsError || res.Result != want:
		return fmt.Errorf("result %q (is_error %v, errors %v), want %q", res.Result, res.IsError, res.Errors, want)
	}
	return nil
}

// BenchmarkSpawnOverhead is the time from the main model handing back a
// reply with one Agent tool_use to that child's first model request:
// assembling and recording the reply, validating and permitting the call,
// routing, creating the child session and its transcript, building its
// tool pool and system prompt, recording its prompt and building its first
// request. One op is a whole main run with one spawn; ns/spawn is the
// spawn's share, the mean, and p50-ns/spawn and p99-ns/spawn its median
// and tail over the ops: on a shared machine one slow spawn moves the mean
// of a short run, the median hardly.
func BenchmarkSpawnOverhead(b *testing.B) {
	f := newFanOut(1)
	var replied time.Time
	var spawns []time.Duration
	f.onSpawn = func() { replied = time.Now() }
	f.onChild = func(context.Context) error {
		spawns = append(spawns, time.Since(replied))
		return nil
	}
	rt := f.open(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.run(ctx, rt); err != nil {
			b.Fatal(err)
		}
	}
	if got := f.childCalls.Load(); got != int64(b.N) {
		b.Fatalf("%d child model calls in %d runs", got, b.N)
	}
	var total time.Duration
	for _, d := range spawns {
		total += d
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/spawn")
	// percentile (bench_background_test.go) answers in microseconds.
	b.ReportMetric(percentile(spawns, 50)*1e3, "p50-ns/spawn")
	b.ReportMetric(percentile(spawns, 99)*1e3, "p99-ns/spawn")
}

// BenchmarkMemoryPerChild is the memory one child session costs. One op is
// a main message that spawns perChild children. B/child and allocs/child
// are the heap allocated per child: the allocation of those runs minus
// that of as many runs of a main message that spawns nothing, over the
// children. live-B/child is what a child holds while it runs: the live heap
// and goroutine stacks after a GC, with perChild children all waiting in
// their first model request, minus the same before the run, over the
// children.
func BenchmarkMemoryPerChild(b *testing.B) {
	const perChild = 10
	f := newFanOut(perChild)
	rt := f.open(b)
	ctx := context.Background()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if err := f.run(ctx, rt); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	n := b.N
	spawnBytes, spawnAllocs := after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs

	// The baseline: the same runtime and main message, no spawn.
	none := newFanOut(0)
	base := none.open(b)
	runtime.ReadMemStats(&before)
	for range n {
		if err := none.run(ctx, base); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	baseBytes, baseAllocs := after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs

	children := float64(n * perChild)
	b.ReportMetric((float64(spawnBytes)-float64(baseBytes))/children, "B/child")
	b.ReportMetric((float64(spawnAllocs)-float64(baseAllocs))/children, "allocs/child")
	b.ReportMetric(float64(liveBytes(b, perChild))/perChild, "live-B/child")
}

// liveBytes runs a main message spawning n children, holds every child in
// its first model request, and returns how much the live heap and stacks
// grew over the idle runtime's.
func liveBytes(b *testing.B, n int) int64 {
	f := newFanOut(n)
	rt := f.open(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := func() int64 {
		arrived, release := make(chan struct{}), make(chan struct{})
		f.onChild = func(ctx context.Context) error {
			select {
			case arrived <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		idle := heapAndStacks()
		done := make(chan error, 1)
		go func() { done <- f.run(ctx, rt) }()
		deadline := time.After(time.Minute)
		for i := range n {
			select {
			case <-arrived:
			case err := <-done:
				b.Fatalf("the run ended with %d of %d children started: %v", i, n, err)
			case <-deadline:
				cancel()
				<-done
				b.Fatalf("only %d of %d children reached the model within a minute", i, n)
			}
		}
		busy := heapAndStacks()
		close(release)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		return busy - idle
	}
	// The first run pays for what a runtime allocates once and keeps (tool
	// schemas, parsed templates, the store's caches); only the second is
	// the children's.
	hold()
	return hold()
}

func heapAndStacks() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// BenchmarkFanOut100 is one main message with 100 Agent calls, run in
// parallel to completion: 100 child sessions created, run and recorded,
// and their results sent back to the main agent's second turn.
func BenchmarkFanOut100(b *testing.B) {
	f := newFanOut(100)
	rt := f.open(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.run(ctx, rt); err != nil {
			b.Fatal(err)
		}
	}
	if got := f.childCalls.Load(); got != int64(100*b.N) {
		b.Fatalf("%d child model calls in %d runs of 100", got, b.N)
	}
}
