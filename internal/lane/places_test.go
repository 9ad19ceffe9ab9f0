package lane

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPlaces: a call takes a free place at once, waits in turn for one
// that frees, starts in the background (no place, no error) when its wait
// runs out, and ends its wait with the cause when it is cancelled.
func TestPlaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPlaces(1)
		release, err := p.Take(t.Context(), 0)
		if err != nil || release == nil {
			t.Fatalf("a free place: %v", err)
		}
		got := make(chan func(), 1)
		go func() {
			r, _ := p.Take(t.Context(), 0)
			got <- r
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("a second call took the one place")
		default:
		}
		release()
		second := <-got
		if second == nil {
			t.Fatal("the waiting call did not get the freed place")
		}
		if r, err := p.Take(t.Context(), time.Minute); r != nil || err != nil {
			t.Fatalf("a wait that ran out: %v, %v; want no place and no error", r != nil, err)
		}
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(errors.New("the session ended"))
		if _, err := p.Take(ctx, 0); err == nil || !strings.Contains(err.Error(), "the session ended") || !strings.Contains(err.Error(), "1 places") {
			t.Fatalf("a cancelled wait: %v", err)
		}
		second()
	})
}
