package cadre

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/queue"
)

// TestNextTurnDoesNotMissTheLastNotification: a background run that ends
// while the conversation looks for its next turn pushes its notification,
// then stops counting as running. Looked at in the wrong order (the queue,
// then the count), that end is in neither: the conversation ended without
// answering the last notification (seen once in 60 runs of
// BenchmarkBackground1000Binary, lane 64). nextTurn counts first.
func TestNextTurnDoesNotMissTheLastNotification(t *testing.T) {
	note := queue.Entry{Mode: queue.ModeNotification}
	for _, tc := range []struct {
		name           string
		closed, failed bool
		endsDuringTake bool
		queued         bool
		wantEntries    bool
		wantOver       bool
	}{
		{name: "a run ends while the queue is looked at", closed: true, endsDuringTake: true, wantOver: false},
		{name: "nothing running, nothing queued", closed: true, wantOver: true},
		{name: "a notification queued", closed: true, queued: true, wantEntries: true},
		{name: "input open: never over", closed: false, wantOver: false},
		{name: "a failed turn ends it", closed: true, failed: true, queued: true, wantOver: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			running := tc.endsDuringTake
			take := func() []queue.Entry {
				if tc.queued {
					return []queue.Entry{note}
				}
				if tc.endsDuringTake {
					// The run ends just after the queue was found
					// empty: it pushes (next look) and stops counting.
					running = false
				}
				return nil
			}
			es, over := nextTurn(tc.closed, tc.failed, func() bool { return running }, take)
			if (len(es) > 0) != tc.wantEntries || over != tc.wantOver {
				t.Errorf("nextTurn = %d entries, over %v; want entries %v, over %v", len(es), over, tc.wantEntries, tc.wantOver)
			}
		})
	}
}
