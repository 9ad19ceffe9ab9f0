package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalCause is why a command's context was cancelled by a signal. Its
// text is the one signal.NotifyContext gives ("interrupt signal
// received"), which result lines quote.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// onSignals returns a context cancelled, with a signalCause, by the first
// SIGINT or SIGTERM; received reports that signal (nil while none came).
// stop ends the watch and waits for its goroutine.
func onSignals(parent context.Context) (ctx context.Context, received func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var mu sync.Mutex
	var got os.Signal
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case s := <-sigs:
			mu.Lock()
			got = s
			mu.Unlock()
			cancel(signalCause{s})
		case <-done:
		}
	})
	received = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	stop = func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
		cancel(nil)
	}
	return ctx, received, stop
}

// signalExit is the exit status of a command a signal stopped: 128 plus
// the signal's number, as a shell reports a process the signal killed
// (130 for SIGINT, 143 for SIGTERM), so that scripts tell "interrupted"
// from "failed".
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
