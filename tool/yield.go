package tool

import "context"

type yieldKey struct{}

// WithYield returns ctx carrying release, which the caller running a call
// gives it: Yield calls it.
func WithYield(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, yieldKey{}, release)
}

// Yield tells whoever runs this call that it is about to wait for
// something other than the machine — a subagent's run, a task's end, a
// person's answer — and no longer needs its place among the calls running
// at once: the loop runs a message's parallel calls a bounded number at a
// time, and a call that waits must not hold back the others. Calling it
// again, or outside a loop, does nothing.
func Yield(ctx context.Context) {
	if release, ok := ctx.Value(yieldKey{}).(func()); ok {
		release()
	}
}
