package subagent

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
)

// A run's end is one event: when another end was recorded first (a sweep
// judged this process gone while the run still went on), the run's own end
// is refused by the store, the recorded one stands, and the parent is told
// of that one, once.
func TestEndRecordedFirstStands(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: g.answers("the answer")})
	marks := watchMarks(h)
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "slow", Prompt: "work"})
	recv(t, g.entered, "the child's model call")
	lt := h.running(id)

	const lost = "executor lost: node n1 sent no heartbeat for 60 seconds"
	if _, err := h.svc.cfg.Tasks.Transition(context.Background(), id, func(rec *task.Task) (task.Event, error) {
		rec.Error, rec.Finished = lost, h.svc.cfg.Now()
		return task.EventOrphan, nil
	}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	ended(t, lt)

	rec := h.record(id)
	if rec.Status != task.StatusFailed || rec.Error != lost || rec.Result == "the answer" {
		t.Errorf("record after the refused end: %s, error %q, result %q; want the sweep's failure kept", rec.Status, rec.Error, rec.Result)
	}
	text := h.notification(id)
	if !strings.Contains(text, "<status>failed</status>") || !strings.Contains(text, lost) {
		t.Errorf("notification = %s\nwant the recorded end: failed, %q", text, lost)
	}
	if n := h.svc.cfg.Queue.Len(""); n != 0 {
		t.Errorf("%d more notifications queued, want the one", n)
	}
	if w := marks.winners(id); len(w) != 1 || !rec.Notified {
		t.Errorf("marked notified by %v (record notified: %v), want once", w, rec.Notified)
	}
}
