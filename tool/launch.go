package tool

import (
	"context"
	"sync"
)

// Launches holds back the background work a batch of calls launches until
// every call of it that may launch some has returned or yielded (Yield):
// the loop makes one for a message's parallel calls of AccessAgent tools.
// A message of 10,000 background Agent calls takes a while to launch; a
// child that started, ran and ended meanwhile waited for its parent's
// turn to end before its notification could be read, so the first
// children's notifications waited the whole launch. Held, the children
// start together once the launch is over.
type Launches struct {
	mu      sync.Mutex
	pending int      // calls that may still launch
	held    []func() // what they launched, to start once pending is 0
	open    bool
}

// NewLaunches returns a gate for n calls that may launch.
func NewLaunches(n int) *Launches {
	return &Launches{pending: n, open: n <= 0}
}

// Settle says that one of the n calls launches nothing more: it returned
// or yielded. The last opens the gate.
func (l *Launches) Settle() {
	l.mu.Lock()
	l.pending--
	last := l.pending <= 0
	l.mu.Unlock()
	if last {
		l.Open()
	}
}

// Open starts what was held and lets everything launched later start at
// once. The loop calls it when the batch ends, whatever became of its
// calls; calling it again does nothing.
func (l *Launches) Open() {
	l.mu.Lock()
	held := l.held
	l.held, l.open = nil, true
	l.mu.Unlock()
	for _, start := range held {
		start()
	}
}

type launchesKey struct{}

// WithLaunches returns ctx carrying l, for a call of l's batch.
func WithLaunches(ctx context.Context, l *Launches) context.Context {
	return context.WithValue(ctx, launchesKey{}, l)
}

// AfterLaunches runs start once the batch of the call ctx belongs to has
// launched all it launches: now, outside such a batch or once it has.
// start must not wait for the call: it may run on the goroutine of the
// call that settles the batch, or of the loop.
func AfterLaunches(ctx context.Context, start func()) {
	l, ok := ctx.Value(launchesKey{}).(*Launches)
	if ok {
		l.mu.Lock()
		if !l.open {
			l.held = append(l.held, start)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
	start()
}
