package runs

// Phase is where a run is in its life in this process. It only moves
// forward: a foreground run ends, or moves to the background
// (Live.ToBackground) and ends there; a background run ends. Whether it
// ended in the foreground or the background decides who delivers its
// result (internal/subagent/deliver). What its task record says —
// pending, running, the terminal status — follows the task lifecycle
// (task.Lifecycle); the phase is what only this process knows.
type Phase int

const (
	PhaseForeground      Phase = iota // its caller waits for it
	PhaseBackground                   // a background task: recorded, notified at its end
	PhaseEndedForeground              // its end is decided; the caller's reply has the result
	PhaseEndedBackground              // its end is decided and recorded (or being recorded)
)

// PhaseOf is the phase a run starts in.
func PhaseOf(background bool) Phase {
	if background {
		return PhaseBackground
	}
	return PhaseForeground
}

// Background reports whether a run in phase p is, or ended as, a
// background task.
func (p Phase) Background() bool { return p == PhaseBackground || p == PhaseEndedBackground }

// Ended reports whether a run in phase p has its end decided.
func (p Phase) Ended() bool { return p >= PhaseEndedForeground }

// End is the phase of the run once it ended, from p.
func (p Phase) End() Phase {
	if p.Background() {
		return PhaseEndedBackground
	}
	return PhaseEndedForeground
}
