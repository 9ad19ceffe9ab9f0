// Package standin is the stand-in, on the node that launched it, of a
// background run dispatched to another node (store.dispatch: any;
// internal/crossnode). The launching node keeps the stand-in in the
// parent's run group, where it counts as running; it follows the run's
// record until the record ends (crossnode.Follower), shows the figures the
// record reports, and then delivers the end the record holds through the
// one delivery (internal/subagent/deliver), exactly once, as a local run's
// end is delivered. The node that ran it records the end and notifies
// nobody: the parent is not in its process.
package standin
