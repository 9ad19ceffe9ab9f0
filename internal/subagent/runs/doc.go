// Package runs is the registry of the runs in this process: a run (Live)
// with what it is (Info), where it is in its life (Phase), its output so
// far and its figures; the Group that owns the runs of one run tree, with
// its indexes by parent agent and in launch order; and what front ends
// show of a run (Run, Group.Runs).
//
// The spawn core (internal/subagent) launches and executes runs and keeps
// its own execution state beside each; every other part — the delivery of
// a run's end, the profiles, the front ends — reads and steers runs
// through this package's API.
//
//	live.go   Info, Live: a run's fixed facts, phase moves, output and end
//	phase.go  Phase: foreground, background, and where it ended
//	end.go    why a run was cancelled, and the status its end gets (StatusOf) and its
//	          session's (SessionStatus); its time limit (WithTimeout)
//	group.go  Group: the runs of one run tree, and the goroutines it owns
//	view.go   Run: what a front end shows of a run; Group.Runs, RunsChanged
package runs
