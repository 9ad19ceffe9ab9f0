package cadre_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// BenchmarkCluster is BenchmarkBackground1000's run on a PostgreSQL store
// shared by one node, then by two: node 1 runs the conversation, whose
// first turn starts the children (10,000 by default;
// CADRE_BENCH_CLUSTER_CHILDREN changes it), and every background run is
// a job in the shared River queue (store.dispatch any), which each node
// works with a lane of 64 (CADRE_BENCH_CLUSTER_LANE changes it). ns/op is the whole run; runs/s the children
// per second; notif-latency from a child's terminal status on its record
// (stamped by whichever node ran it) to the main request that carries its
// notification; busiest-node-share the part of the runs the node that
// ran the most ran (0.5 is an even split between two).
func BenchmarkCluster(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CADRE_BENCH_CLUSTER_CHILDREN")); err == nil && v > 0 {
		n = v
	}
	for _, nodes := range []int{1, 2} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) { benchCluster(b, n, nodes) })
	}
}

func benchCluster(b *testing.B, children, nodes int) {
	lane := 64
	if v, err := strconv.Atoi(os.Getenv("CADRE_BENCH_CLUSTER_LANE")); err == nil && v > 0 {
		lane = v
	}
	ctx := context.Background()
	var (
		recToEnq, enqToReq, total, steady []time.Duration
		wall                              time.Duration
		busiest                           float64
		warned                            warnCounter
		mainRequests                      int
	)
	for b.Loop() {
		b.StopTimer()
		url := pg.URL(b)
		f := newBgFanOut(children)
		clock := newStepClock()
		home, dir := b.TempDir(), b.TempDir()
		b.Chdir(dir)
		rt := openClusterNode(b, home, dir, url, f.model, lane, clock, &warned)
		var second *cadre.Runtime
		if nodes == 2 {
			second = openClusterNode(b, b.TempDir(), dir, url, f.model, lane, clock, &warned)
		}
		runtime.GC()
		start := time.Now()
		b.StartTimer()

		err := f.run(ctx, rt)

		b.StopTimer()
		wall += time.Since(start)
		if err == nil {
			err = f.latencies(ctx, rt, clock, &recToEnq, &enqToReq, &total, &steady)
		}
		mainRequests += f.mainRequests
		if err == nil && second != nil {
			busiest += busiestShare(ctx, rt, f.sessionID)
		}
		if err != nil {
			err = fmt.Errorf("%w; tasks: %s", err, taskSummary(ctx, rt, f.sessionID))
		}
		if second != nil {
			second.Close()
		}
		rt.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(children*b.N)/wall.Seconds(), "runs/s")
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"notif-latency", total}, {"notif-latency-after-launch", steady}} {
		b.ReportMetric(percentile(m.d, 50)/1e3, m.name+"-p50-ms")
		b.ReportMetric(percentile(m.d, 99)/1e3, m.name+"-p99-ms")
	}
	if nodes == 2 {
		b.ReportMetric(busiest/float64(b.N), "busiest-node-share")
	}
	b.ReportMetric(float64(mainRequests)/float64(b.N), "main-requests/op")
	b.ReportMetric(float64(warned.election.Load())/float64(b.N), "election-errors/op")
	b.ReportMetric(float64(warned.all.Load())/float64(b.N), "warnings/op")
	if first := warned.first.Load(); first != nil {
		b.Logf("first warning: %s", *first)
	}
}

// warnCounter is a slog handler counting the warnings and errors the
// nodes log: River's elector among them (a leader election that failed,
// as when its pool ran dry at 10,000 runs on two nodes).
type warnCounter struct {
	all, election atomic.Int64
	first         atomic.Pointer[string]
}

func (w *warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *warnCounter) Handle(_ context.Context, r slog.Record) error {
	w.all.Add(1)
	text := r.Message
	r.Attrs(func(a slog.Attr) bool { text += " " + a.String(); return true })
	if strings.Contains(strings.ToLower(text), "elect") {
		w.election.Add(1)
	}
	w.first.CompareAndSwap(nil, &text)
	return nil
}

func (w *warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnCounter) WithGroup(string) slog.Handler      { return w }

// openClusterNode opens a runtime on the store at url with its own state
// dir, as one node: dispatch any and a lane of lane.
func openClusterNode(b *testing.B, home, dir, url string, model func(context.Context, *llm.Request) (*llm.Response, error), lane int, clock *stepClock, warned *warnCounter) *cadre.Runtime {
	b.Helper()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), fmt.Appendf(nil, `{"subagents": {"maxConcurrent": %d}}`, lane), 0o600); err != nil {
		b.Fatal(err)
	}
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: dir, LLM: &llm.ModelFunc{ID: "bench:zero-latency", Func: model},
		Getenv: func(k string) string {
			switch k {
			case "CADRE_HOME":
				return home
			case "CADRE_STORE_URL":
				return url
			}
			return ""
		},
		Now: clock.Now, Dispatch: cadre.DispatchAny, Logger: slog.New(warned),
	})
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

// busiestShare is the part of the session's tasks that the node which ran
// the most of them ran.
func busiestShare(ctx context.Context, rt *cadre.Runtime, sessionID string) float64 {
	tasks, err := rt.Tasks(ctx, sessionID, 0)
	if err != nil || len(tasks) == 0 {
		return 0
	}
	owners := map[string]int{}
	most := 0
	for _, t := range tasks {
		owners[t.Owner]++
		most = max(most, owners[t.Owner])
	}
	return float64(most) / float64(len(tasks))
}

// taskSummary counts the session's tasks by status and quotes an error.
func taskSummary(ctx context.Context, rt *cadre.Runtime, sessionID string) string {
	tasks, err := rt.Tasks(ctx, sessionID, 0)
	if err != nil {
		return err.Error()
	}
	n := map[cadre.TaskStatus]int{}
	example := ""
	for _, t := range tasks {
		n[t.Status]++
		if t.Error != "" && example == "" {
			example = t.Error
		}
	}
	return fmt.Sprintf("%d recorded %v, e.g. %q", len(tasks), n, example)
}
