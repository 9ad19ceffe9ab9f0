// Package crossnode carries background subagent runs between the nodes
// that share a task store (store.dispatch: any), through the run's task
// record alone.
//
// A launching node records a run pending with no owner and hands a Job to
// a Dispatcher (internal/dispatch: a River queue every node works); the
// first node with a free place Claims the record and runs it. The
// launching node keeps a stand-in in its parent's group that Follows the
// record until it ends and then delivers the end, as a local run would. A
// stop reaches a run on another node through its record (RequestStop): a
// run no node claimed yet is killed at once, any other is asked to stop
// and the node running it does.
//
// What a run is and how its end is delivered stay with the subagent core,
// which imports this package.
package crossnode
