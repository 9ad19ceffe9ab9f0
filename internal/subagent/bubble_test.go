package subagent

import (
	"testing"
	"testing/synctest"
)

// inBubble runs a subtest in a synctest bubble. Tests of timeouts, lanes
// and auto-backgrounding run there: the service's timers read the bubble's
// fake clock, which jumps ahead whenever every goroutine of the test waits,
// so a one-second limit passes at once, and exactly, instead of costing a
// second of wall time.
func inBubble(f func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, f) }
}
