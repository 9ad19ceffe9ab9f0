package cadre_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// BenchmarkBackgroundPostgres is BenchmarkBackground1000/lane=64 on a
// PostgreSQL store (the test server, fsync off, on the same machine), as
// one `cadre -p` runs it: one node, background runs in the process that
// launched them (store.dispatch sticky, the default). children=1000 always
// runs; children=10000 only with CADRE_BENCH_PG_10000=1 (about a minute).
// ns/op is the whole run; the notification latencies are
// BenchmarkBackground1000's, in ms; runs/s the children per second.
func BenchmarkBackgroundPostgres(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			if n > 1000 && os.Getenv("CADRE_BENCH_PG_10000") == "" {
				b.Skip("set CADRE_BENCH_PG_10000=1 to run 10,000 children on PostgreSQL")
			}
			benchBackgroundPostgres(b, n)
		})
	}
}

func benchBackgroundPostgres(b *testing.B, children int) {
	const lane = 64
	ctx := context.Background()
	var (
		recToEnq, enqToReq, total, steady []time.Duration
		wall, launch                      time.Duration
		atLaunch, mainRequests            int
	)
	for b.Loop() {
		b.StopTimer()
		f := newBgFanOut(children)
		clock := newStepClock()
		rt := openBackgroundOn(b, f, lane, clock, pg.URL(b))
		runtime.GC()
		start := time.Now()
		b.StartTimer()

		err := f.run(ctx, rt)

		b.StopTimer()
		wall += time.Since(start)
		if err == nil {
			err = f.latencies(ctx, rt, clock, &recToEnq, &enqToReq, &total, &steady)
		}
		if err != nil {
			err = fmt.Errorf("%w; tasks: %s", err, taskSummary(ctx, rt, f.sessionID))
		}
		rt.Close()
		if err != nil {
			b.Fatal(err)
		}
		launch += f.launched.Sub(f.spawned)
		atLaunch += f.atLaunch
		mainRequests += f.mainRequests
		b.StartTimer()
	}
	b.ReportMetric(float64(children*b.N)/wall.Seconds(), "runs/s")
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"rec-to-enq", recToEnq}, {"enq-to-req", enqToReq}, {"notif-latency", total}, {"notif-latency-after-launch", steady}} {
		b.ReportMetric(percentile(m.d, 50)/1e3, m.name+"-p50-ms")
		b.ReportMetric(percentile(m.d, 99)/1e3, m.name+"-p99-ms")
	}
	b.ReportMetric(float64(launch.Milliseconds())/float64(b.N), "launch-ms")
	b.ReportMetric(float64(atLaunch)/float64(b.N), "notifs-at-launch/op")
	b.ReportMetric(float64(mainRequests)/float64(b.N), "main-requests/op")
}
