// Package dispatch carries background subagent runs between the nodes that
// share a PostgreSQL store, as River jobs: a Dispatcher inserts a run's job
// into the shared queue, and every node's Worker (as many per node as its
// lane has places) hands the job to the node's subagent service, which
// claims the run's record and runs it. River supplies what that needs
// across machines: the queue, per-node worker limits, wake-ups by
// LISTEN/NOTIFY, and rescue of jobs whose node died. The job and what the
// nodes do with a run's record (claim, stop, follow) are internal/crossnode's:
// this package is only the transport.
package dispatch
