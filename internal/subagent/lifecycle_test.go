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

// TestRunPhase: a run's phase in this process only moves forward, and its
// end keeps where it ended, which decides who delivers its result.
func TestRunPhase(t *testing.T) {
	tests := []struct {
		p                   runPhase
		background, isEnded bool
		end                 runPhase
	}{
		{phaseForeground, false, false, phaseEndedForeground},
		{phaseBackground, true, false, phaseEndedBackground},
		{phaseEndedForeground, false, true, phaseEndedForeground},
		{phaseEndedBackground, true, true, phaseEndedBackground},
	}
	for _, tt := range tests {
		if tt.p.background() != tt.background || tt.p.ended() != tt.isEnded || tt.p.end() != tt.end {
			t.Errorf("phase %d: background %v, ended %v, end %d; want %v, %v, %d",
				tt.p, tt.p.background(), tt.p.ended(), tt.p.end(), tt.background, tt.isEnded, tt.end)
		}
	}
	if phaseOf(true) != phaseBackground || phaseOf(false) != phaseForeground {
		t.Error("phaseOf does not start a run in the phase of how it was launched")
	}
	// A run that ended cannot be moved to the background or asked to go.
	lt := &liveTask{id: "r1", phase: phaseEndedForeground, bgRequested: make(chan struct{})}
	if lt.requestBackground() {
		t.Error("requestBackground asked a run that ended to move to the background")
	}
	if !lt.ended() || lt.isBackground() {
		t.Errorf("a run that ended in the foreground: ended %v, background %v", lt.ended(), lt.isBackground())
	}
}
