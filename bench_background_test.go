package cadre_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// bgChildren is how many background subagents one op starts: 1,000, or
// CADRE_BENCH_BG_CHILDREN (10000 for issue 28's figure).
func bgChildren() int {
	if n, err := strconv.Atoi(os.Getenv("CADRE_BENCH_BG_CHILDREN")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// BenchmarkBackground1000 is one main run whose first turn starts 1,000
// background subagents in one assistant message (Agent with
// run_in_background: true), through a lane of 8 and of 64
// (subagents.maxConcurrent). The main agent ends its turn at once, then
// answers the notifications — one turn for whatever has queued up since
// its last turn — until all 1,000 have reached it; the run ends there.
//
// ns/op is the wall time of the whole run. launch-ms is its first phase:
// from the model handing back the 1,000 Agent calls to the main request
// carrying their 1,000 async_launched results (sessions, transcripts,
// output files and pending task records created; the first children
// already run through the lane).
//
// The notification latency is measured per task, over every op: rec-to-enq
// from the task's terminal status being stamped on its record (Finished)
// to its notification being enqueued (the task_notification event),
// enq-to-req from there to the main model request that carries it (a
// turn's, or the compaction's that summarises it for the next turn), and
// notif-latency the two together, each as p50 and p99. A child that ends
// during the launch waits for the first turn to end (notifs-at-launch/op
// of them do), which makes the tail; notif-latency-after-launch is the
// latency of the others alone. notifs/request is how many notifications a
// main request that carried any carried on average, main-requests/op how
// many main model calls a run made.
//
// With CADRE_BENCH_LAUNCH_CPUPROFILE set, the launch's CPU profile (from
// the Agent calls handed back to the request carrying their results) is
// written there: the phase that makes the notifications' tail.
//
// peak-heap-KB is the largest HeapInuse seen (sampled every 10 ms),
// peak-stacks-KB the largest StackInuse (the goroutines' stacks),
// peak-goroutines the largest goroutine count: a pending child waits in a
// goroutine of its own. With CADRE_BENCH_HEAPPROFILE set, the heap that is
// live when a run has ended is written there, as a pprof heap profile.
func BenchmarkBackground1000(b *testing.B) {
	for _, lane := range []int{8, 64} {
		b.Run(fmt.Sprintf("lane=%d", lane), func(b *testing.B) { benchBackground(b, lane) })
	}
}

func benchBackground(b *testing.B, lane int) {
	ctx := context.Background()
	var (
		recToEnq, enqToReq, total, steady []time.Duration
		perRequest                        []int
		mainRequests, atLaunch            int
		launch                            time.Duration
		peak                              peakSampler
	)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f := newBgFanOut(bgChildren())
		clock := newStepClock()
		rt := openBackground(b, f, lane, clock)
		runtime.GC()
		stop := peak.start()
		b.StartTimer()

		err := f.run(ctx, rt)

		b.StopTimer()
		stop()
		if path := os.Getenv("CADRE_BENCH_HEAPPROFILE"); path != "" && err == nil {
			err = writeHeapProfile(path)
		}
		if err == nil {
			err = f.profileErr
		}
		if err == nil {
			err = f.latencies(ctx, rt, clock, &recToEnq, &enqToReq, &total, &steady)
		}
		rt.Close()
		if err != nil {
			b.Fatal(err)
		}
		perRequest = append(perRequest, f.perRequest...)
		atLaunch += f.atLaunch
		mainRequests += f.mainRequests
		launch += f.launched.Sub(f.spawned)
		b.StartTimer()
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"rec-to-enq", recToEnq}, {"enq-to-req", enqToReq}, {"notif-latency", total}, {"notif-latency-after-launch", steady}} {
		b.ReportMetric(percentile(m.d, 50), m.name+"-p50-µs")
		b.ReportMetric(percentile(m.d, 99), m.name+"-p99-µs")
	}
	sum := 0
	for _, n := range perRequest {
		sum += n
	}
	b.ReportMetric(float64(sum)/float64(len(perRequest)), "notifs/request")
	b.ReportMetric(float64(mainRequests)/float64(b.N), "main-requests/op")
	b.ReportMetric(float64(launch.Milliseconds())/float64(b.N), "launch-ms")
	b.ReportMetric(float64(atLaunch)/float64(b.N), "notifs-at-launch/op")
	b.ReportMetric(float64(peak.heap/1024), "peak-heap-KB")
	b.ReportMetric(float64(peak.stacks/1024), "peak-stacks-KB")
	b.ReportMetric(float64(peak.goroutines), "peak-goroutines")
}

// bgFanOut is a zero-latency model for a main agent that starts n
// background children in its first turn, every child answering at once,
// and then answers each batch of notifications with how many it has seen.
type bgFanOut struct {
	calls []llm.Block

	mu sync.Mutex
	// carried is when the first main request carrying each task's
	// notification reached the model, by task id.
	carried      map[string]time.Time
	perRequest   []int // notifications per main request that carried any
	mainRequests int
	// enqueued is the Time of each task's task_notification event, by
	// task id: the event is published right after the entry is pushed.
	enqueued  map[string]time.Time
	sessionID string
	// spawned is when the model handed back the Agent calls, launched
	// when the request carrying their async_launched results arrived.
	spawned, launched time.Time
	// atLaunch is how many notifications that request carried: children
	// that ended while the first turn was still launching the rest.
	atLaunch int
	// failed is the first Agent call's error, if one failed.
	failed string
	// profile is the launch's CPU profile being written, profileErr what
	// went wrong with it (CADRE_BENCH_LAUNCH_CPUPROFILE).
	profile    *os.File
	profileErr error
}

func newBgFanOut(n int) *bgFanOut {
	f := &bgFanOut{carried: map[string]time.Time{}, enqueued: map[string]time.Time{}}
	for i := range n {
		in := fmt.Sprintf(`{"description":"part %d","prompt":"Do part %d of the job and report back.","run_in_background":true}`, i, i)
		f.calls = append(f.calls, llm.ToolUse(fmt.Sprintf("toolu_%04d", i), "Agent", json.RawMessage(in)))
	}
	return f
}

func (f *bgFanOut) model(_ context.Context, req *llm.Request) (*llm.Response, error) {
	switch req.Agent {
	case "general-purpose":
		return llm.Reply(llm.Text(childAnswer)), nil
	case "main:compact":
		// The main conversation of thousands of notifications outgrows
		// the context. A notification it summarises before a turn of the
		// main agent saw it reaches the model here, and the main agent
		// through the summary.
		f.mu.Lock()
		defer f.mu.Unlock()
		f.carry(req.Messages, time.Now())
		return llm.Reply(llm.Text("The main agent started the background agents and notes each result.")), nil
	case "main":
	default:
		return nil, fmt.Errorf("unexpected agent %q", req.Agent)
	}
	arrived := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mainRequests++
	// What is new since the model's last reply: each request repeats the
	// history (or, compacted, a summary of it).
	from := 0
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleAssistant {
			from = i + 1
			break
		}
	}
	n := f.carry(req.Messages[from:], arrived)
	if f.mainRequests == 2 {
		f.stopProfile()
		f.launched, f.atLaunch = arrived, n
	}
	if n > 0 {
		f.perRequest = append(f.perRequest, n)
	}
	if f.spawned.IsZero() {
		f.spawned = time.Now()
		f.startProfile()
		return llm.Reply(slices.Clone(f.calls)...), nil
	}
	return llm.Reply(llm.Text(fmt.Sprintf("%d notifications", len(f.carried)))), nil
}

// startProfile starts the launch's CPU profile, if one is asked for.
func (f *bgFanOut) startProfile() {
	path := os.Getenv("CADRE_BENCH_LAUNCH_CPUPROFILE")
	if path == "" {
		return
	}
	if f.profile, f.profileErr = os.Create(path); f.profileErr != nil {
		return
	}
	if f.profileErr = pprof.StartCPUProfile(f.profile); f.profileErr != nil {
		f.profile.Close()
		f.profile = nil
	}
}

// stopProfile ends the launch's CPU profile, if one is being written.
func (f *bgFanOut) stopProfile() {
	if f.profile == nil {
		return
	}
	pprof.StopCPUProfile()
	f.profileErr = f.profile.Close()
	f.profile = nil
}

// carry notes the notifications in msgs that no request carried before as
// carried at arrived, and the first failed Agent call; it returns how
// many it noted. f.mu is held.
func (f *bgFanOut) carry(msgs []llm.Message, arrived time.Time) int {
	n := 0
	for _, m := range msgs {
		for _, blk := range m.Content {
			if blk.Type == llm.BlockToolResult && blk.IsError && f.failed == "" && len(blk.Content) > 0 {
				f.failed = blk.Content[0].Text
			}
			for _, id := range taskIDs(blk.Text) {
				if _, ok := f.carried[id]; !ok {
					f.carried[id] = arrived
					n++
				}
			}
		}
	}
	return n
}

// taskIDs returns the ids of the <task-notification>s in s.
func taskIDs(s string) []string {
	var ids []string
	for {
		_, rest, ok := strings.Cut(s, "<task-id>")
		if !ok {
			return ids
		}
		id, rest, ok := strings.Cut(rest, "</task-id>")
		if !ok {
			return ids
		}
		ids, s = append(ids, id), rest
	}
}

// openBackground starts a runtime on f's model in a private project whose
// settings set the subagent lane, and a private state dir.
func openBackground(b *testing.B, f *bgFanOut, lane int, clock *stepClock) *cadre.Runtime {
	b.Helper()
	return openBackgroundOn(b, f, lane, clock, "")
}

// openBackgroundOn is openBackground on the PostgreSQL store at storeURL
// (the SQLite file when it is ""), with the default dispatch (sticky).
func openBackgroundOn(b *testing.B, f *bgFanOut, lane int, clock *stepClock, storeURL string) *cadre.Runtime {
	b.Helper()
	home, dir := b.TempDir(), b.TempDir()
	b.Chdir(dir)
	settings := fmt.Sprintf(`{"subagents": {"maxConcurrent": %d}}`, lane)
	if err := os.MkdirAll(filepath.Join(dir, ".cadre"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		b.Fatal(err)
	}
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: dir,
		LLM: &llm.ModelFunc{ID: "bench:zero-latency", Func: f.model},
		Getenv: func(k string) string {
			if k == "CADRE_STORE_URL" {
				return storeURL
			}
			return testkit.Home(home)(k)
		},
		Now: clock.Now,
	})
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

// run runs the main message to its end, noting when each notification was
// enqueued, and checks that the last turn saw every notification.
func (f *bgFanOut) run(ctx context.Context, rt *cadre.Runtime) error {
	var res *cadre.ResultInfo
	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: "Split the job between background agents."}) {
		if err != nil {
			return err
		}
		switch {
		case ev.Type == cadre.EventSystem && ev.Subtype == "init":
			f.sessionID = ev.SessionID
		case ev.Type == cadre.EventSystem && ev.Subtype == cadre.SubtypeTaskNotification:
			f.enqueued[ev.Task.TaskID] = ev.Time
		case ev.Type == cadre.EventResult && ev.ParentToolUseID == "":
			res = ev.Result
		}
	}
	want := fmt.Sprintf("%d notifications", len(f.calls))
	switch {
	case res == nil:
		return errors.New("the run ended without a result event")
	case f.failed != "":
		return fmt.Errorf("an Agent call failed: %s", f.failed)
	case res.IsError || res.Result != want:
		return fmt.Errorf("last result %q (is_error %v, errors %v), want %q", res.Result, res.IsError, res.Errors, want)
	case f.failed != "":
		return fmt.Errorf("an Agent call failed: %s", f.failed)
	case len(f.enqueued) != len(f.calls):
		return fmt.Errorf("%d task_notification events, want %d", len(f.enqueued), len(f.calls))
	}
	return nil
}

// latencies appends each task's notification legs, reading the terminal
// status's stamp from the task's record; steady gets the whole latency of
// the notifications enqueued after the launch, which did not wait for the
// first turn to end.
func (f *bgFanOut) latencies(ctx context.Context, rt *cadre.Runtime, clock *stepClock, recToEnq, enqToReq, total, steady *[]time.Duration) error {
	tasks, err := rt.Tasks(ctx, f.sessionID, 0)
	if err != nil {
		return fmt.Errorf("list the run's tasks: %w", err)
	}
	if len(tasks) != len(f.calls) {
		return fmt.Errorf("%d task records, want %d", len(tasks), len(f.calls))
	}
	for _, t := range tasks {
		if t.Status != cadre.TaskCompleted {
			return fmt.Errorf("task %s ended %s (%s), want completed", t.ID, t.Status, t.Error)
		}
		finished, ok1 := clock.Real(t.Finished)
		enqueued, ok2 := clock.Real(f.enqueued[t.ID])
		carried, ok3 := f.carried[t.ID]
		if !ok1 || !ok2 || !ok3 {
			return fmt.Errorf("task %s: finished %v (%v), enqueued %v (%v), carried by a main request %v", t.ID, t.Finished, ok1, f.enqueued[t.ID], ok2, ok3)
		}
		*recToEnq = append(*recToEnq, enqueued.Sub(finished))
		*enqToReq = append(*enqToReq, carried.Sub(enqueued))
		*total = append(*total, carried.Sub(finished))
		if enqueued.After(f.launched) {
			*steady = append(*steady, carried.Sub(finished))
		}
	}
	return nil
}

// stepClock is the runtime's clock for these benchmarks. The store keeps
// times to the millisecond, too coarse for a leg that takes microseconds;
// so every reading is one millisecond after the one before, a stamp the
// store keeps exactly, and Real maps it back to the wall time at which it
// was read. The runtime's durations and ages then count readings, not
// time, which nothing measured here depends on.
type stepClock struct {
	epoch time.Time
	mu    sync.Mutex
	real  []time.Time
}

func newStepClock() *stepClock {
	return &stepClock{epoch: time.Now().UTC().Truncate(time.Millisecond)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.real)
	c.real = append(c.real, time.Now())
	return c.epoch.Add(time.Duration(n) * time.Millisecond)
}

// Real is the wall time at which the clock returned t.
func (c *stepClock) Real(t time.Time) (time.Time, bool) {
	d := t.Sub(c.epoch)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int(d / time.Millisecond)
	if t.IsZero() || d%time.Millisecond != 0 || n < 0 || n >= len(c.real) {
		return time.Time{}, false
	}
	return c.real[n], true
}

// percentile is the p-th percentile of ds in microseconds (nearest rank).
func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return float64(s[max(i, 0)].Nanoseconds()) / 1e3
}

// peakSampler records the largest heap in use and goroutine count seen
// while started.
// writeHeapProfile writes what is live once a run has ended, before the
// runtime closes: what the process keeps of its children after they end.
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type peakSampler struct {
	heap, stacks uint64
	goroutines   int
}

// start samples every 10 ms until the returned func is called, which
// takes a last sample and waits for the sampler to end.
func (p *peakSampler) start() (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		p.heap = max(p.heap, m.HeapInuse)
		p.stacks = max(p.stacks, m.StackInuse)
		p.goroutines = max(p.goroutines, runtime.NumGoroutine())
	}
	go func() {
		defer close(ended)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		sample()
	}
}
