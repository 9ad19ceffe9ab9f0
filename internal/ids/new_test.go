package ids

import (
	"os"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// TestNewOrdered: every id is a UUIDv7 that passes Check, and each is
// greater, as a plain string, than the one made before it — also when
// thousands fall into the same millisecond.
func TestNewOrdered(t *testing.T) {
	const n = 20000
	prev := ""
	for i := range n {
		id := New()
		if id <= prev {
			t.Fatalf("id %d = %s, not greater than the one before, %s", i, id, prev)
		}
		prev = id
	}
	u, err := uuid.Parse(prev)
	if err != nil || u.Version() != 7 || u.String() != prev {
		t.Fatalf("New() = %q: want a canonical UUIDv7 (parsed %v, version %d, err %v)", prev, u, u.Version(), err)
	}
	if err := Check(prev, os.ErrInvalid); err != nil {
		t.Errorf("Check refuses an id New made: %v", err)
	}
}

// TestNewUnique: goroutines making ids at once never get the same one.
func TestNewUnique(t *testing.T) {
	const workers, each = 8, 2000
	var (
		mu   sync.Mutex
		seen = make(map[string]bool, workers*each)
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			mine := make([]string, each)
			for i := range mine {
				mine[i] = New()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range mine {
				if seen[id] {
					t.Errorf("id %s made twice", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
}
