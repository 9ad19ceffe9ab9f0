// Package heartbeat keeps a background run's task record alive while the
// run goes on, and hears through it a stop requested from anywhere — `cadre
// tasks stop`, TaskStop in another process (S-X2). A record whose
// heartbeat goes stale is how the sweep of another process tells a run
// whose process died from one that goes on.
//
// A run dispatched to another node also shows its figures so far (tool
// uses, newest text) on its record, for the stand-in on the node that
// launched it.
package heartbeat
