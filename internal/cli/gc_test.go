package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent is the collector's percent, read without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLeanGC: the collector's percent stays until a collection finds the
// live heap over the threshold, and then switches; GOGC set by the user
// is left alone. Not parallel: the percent is the process's.
func TestLeanGC(t *testing.T) {
	restore := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(restore) })
	const above = 64 << 20

	t.Run("GOGC set", func(t *testing.T) {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", "100")
		leanGC(1, 37)
		for range 3 {
			runtime.GC()
		}
		if p := gcPercent(); p != 100 {
			t.Errorf("percent %d with GOGC set, want 100", p)
		}
	})

	debug.SetGCPercent(100)
	leanGC(above, 37)
	for range 3 {
		runtime.GC()
	}
	if p := gcPercent(); p != 100 {
		t.Fatalf("percent %d with a small live heap, want 100", p)
	}
	live := make([]byte, above+(1<<20))
	for i := range live {
		live[i] = 1 // resident, not just reserved
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 37 {
		if time.Now().After(deadline) {
			t.Fatalf("percent %d after collections with %d bytes live, want 37", gcPercent(), len(live))
		}
		runtime.GC() // each collection runs the check once, after it
		runtime.Gosched()
	}
	runtime.KeepAlive(live)
}
