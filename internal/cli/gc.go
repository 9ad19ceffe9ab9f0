package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The command's collector: Go's default (GOGC=100) lets the heap grow to
// twice what is live, plus the goroutines' stacks, before it collects. A
// cadre process spends its time waiting on models, not on the CPU, and
// the runs that grow its heap are the ones with many agents, where memory
// is what runs out. So once the live heap passes leanAbove, the command
// collects at leanPercent: more collections, a smaller peak (1,000
// background agents: see docs/performance.md). A one-turn run, whose live
// heap is about 2 MiB, never gets there and keeps the default, whose 4 MiB
// minimum heap spares it any collection at all. GOGC, when set, is the
// user's choice and is left alone.
const (
	leanAbove   = 4 << 20
	leanPercent = 50
)

// leanGC arms that switch: after each collection, until the live heap is
// over above, it looks once (a cleanup of an object that lives for one
// cycle), then sets the collector's percent and stops looking.
func leanGC(above uint64, percent int) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// A pointer field keeps the object out of the tiny allocator,
		// whose blocks free together, late.
		type tick struct{ _ *int }
		runtime.AddCleanup(new(tick), func(struct{}) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() >= above {
				debug.SetGCPercent(percent)
				return
			}
			arm()
		}, struct{}{})
	}
	arm()
}
