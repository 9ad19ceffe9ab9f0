package cli

import (
	"os"
	"runtime"
	"runtime/debug"
)

// The command's collector: Go's default (GOGC=100) lets the heap grow to
// twice what is live, plus the goroutines' stacks, before it collects. A
// cadre process spends its time waiting on models, not on the CPU, and
// the runs that grow its heap are the ones with many agents, where memory
// is what runs out. So once the live heap passes leanAbove, the command
// collects at leanPercent: more collections, a smaller peak. Below it the
// default's collections are the cheaper choice: a run of 1,000 background
// agents (a live heap of 20-30 MiB) spends a tenth less CPU with them
// than at leanPercent, for 8 MB more at its peak, where 10,000 agents
// pass 64 MiB early in their launch (docs/performance.md, issue 28).
// leanPercent is 40, not 50, since a message's children start together
// once it has launched them all: 10,000 then wait at once, and at 40 the
// peak of private memory fell from 188-196 to 175-178 MB, for a tenth of
// a second of wall or less in a run of 2.4-3.3 s. A one-turn run, whose
// live heap is about 2 MiB, keeps the default too, whose 4 MiB minimum
// heap spares it any collection at all. GOGC, when set, is the user's
// choice and is left alone.
const (
	leanAbove   = 64 << 20
	leanPercent = 40
)

// leanGC arms that switch: after each collection, until the live heap is
// over above, it looks once (a cleanup of an object that lives for one
// cycle), then sets the collector's percent and stops looking. It reads
// the heap with ReadMemStats, not runtime/metrics: linking that package
// costs every command its initialisation and, on first read, the
// runtime's table of every metric (docs/performance.md, "Start-up"); the
// heap allocated just after a collection is the live heap and what little
// was allocated since, close enough for a threshold.
func leanGC(above uint64, percent int) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	var arm func()
	arm = func() {
		// A pointer field keeps the object out of the tiny allocator,
		// whose blocks free together, late.
		type tick struct{ _ *int }
		runtime.AddCleanup(new(tick), func(struct{}) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc >= above {
				debug.SetGCPercent(percent)
				return
			}
			arm()
		}, struct{}{})
	}
	arm()
}
