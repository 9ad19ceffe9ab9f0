// Package cluster is what a cadre process does as one node of many sharing
// a PostgreSQL store (DESIGN §14, S-X2): it records itself and heartbeats,
// it runs River (github.com/riverqueue/river), the job system that carries
// work between nodes, on the store's connection pool, and it fails the work
// of nodes that went silent.
//
// Start returns at once and does its database work in a goroutine the
// Node owns, so a short `cadre -p` run does not wait for it before its
// first model request: the node's record (table nodes, its id the
// process's task owner id), River's own schema (migrated under an advisory
// lock of cadre's, so nodes starting together on a fresh database migrate
// it once), River's client with the workers and queues the caller
// registered, then a heartbeat every Config.Heartbeat. Client waits for
// River and hands out its client, to insert and cancel jobs. Close stops
// River gracefully (running jobs get a grace period, then their contexts
// end), records that the node left, and waits for everything the Node
// started.
//
// # Lost nodes
//
// River's leader enqueues the orphan sweep (Sweep) every SweepEvery, with
// jitter; any node's maintenance worker runs it. It fails the unfinished
// tasks, and the running sessions, of nodes silent for Config.OrphanAfter
// or gone, measuring silence by the database's clock. Sweeps may overlap
// (a leader change, a process starting, which sweeps once itself): each
// task is re-checked inside its row-locked update, so it fails once.
package cluster
