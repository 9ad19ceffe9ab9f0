package lane

import (
	"context"
	"fmt"
	"time"
)

// Places bounds the foreground runs in flight at one depth of the run tree
// (subagents.maxForegroundConcurrent): one message may hold hundreds of
// calls, and every run holds files and a connection. Calls wait in turn,
// never refused. A Places is safe for concurrent use.
type Places struct{ slots chan struct{} }

// NewPlaces returns n places (at least one).
func NewPlaces(n int) *Places { return &Places{slots: make(chan struct{}, max(n, 1))} }

// Take waits for a place. It returns a release func once a place is taken,
// or, when wait (> 0) runs out first, nil and no error: the caller then
// starts the run in the background. A cancelled ctx ends the wait with its
// cause.
func (p *Places) Take(ctx context.Context, wait time.Duration) (func(), error) {
	var timeout <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case p.slots <- struct{}{}:
		return func() { <-p.slots }, nil
	case <-timeout:
		return nil, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("stopped while waiting for one of the %d places of subagents.maxForegroundConcurrent: %w", cap(p.slots), context.Cause(ctx))
	}
}
