package runs

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
)

// TestRunPhase: a run's phase in this process only moves forward, and its
// end keeps where it ended, which decides who delivers its result.
func TestRunPhase(t *testing.T) {
	tests := []struct {
		p                   Phase
		background, isEnded bool
		end                 Phase
	}{
		{PhaseForeground, false, false, PhaseEndedForeground},
		{PhaseBackground, true, false, PhaseEndedBackground},
		{PhaseEndedForeground, false, true, PhaseEndedForeground},
		{PhaseEndedBackground, true, true, PhaseEndedBackground},
	}
	for _, tt := range tests {
		if tt.p.Background() != tt.background || tt.p.Ended() != tt.isEnded || tt.p.End() != tt.end {
			t.Errorf("phase %d: background %v, ended %v, end %d; want %v, %v, %d",
				tt.p, tt.p.Background(), tt.p.Ended(), tt.p.End(), tt.background, tt.isEnded, tt.end)
		}
	}
	if PhaseOf(true) != PhaseBackground || PhaseOf(false) != PhaseForeground {
		t.Error("PhaseOf does not start a run in the phase of how it was launched")
	}
	// A run that ended cannot be moved to the background or asked to go.
	lt := New(Info{ID: "r1"}, Options{})
	lt.Finish(&runner.Result{Outcome: &loop.Outcome{}}, task.StatusCompleted, nil, time.Now(), "")
	if lt.RequestBackground() {
		t.Error("RequestBackground asked a run that ended to move to the background")
	}
	if !lt.Ended() || lt.IsBackground() {
		t.Errorf("a run that ended in the foreground: ended %v, background %v", lt.Ended(), lt.IsBackground())
	}
}
