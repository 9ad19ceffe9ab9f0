// Package cluster is what a cadre process does as one node of many sharing
// a PostgreSQL store (DESIGN §14, S-X2): it runs River
// (github.com/riverqueue/river), the job system that carries work between
// nodes, on the store's connection pool.
//
// Start returns at once and does its database work in a goroutine the
// Node owns, so a short `cadre -p` run does not wait for it before its
// first model request: River's own schema is migrated (under an advisory
// lock of cadre's, so nodes starting together on a fresh database migrate
// it once) and River's client is started with the workers and queues the
// caller registered. Client waits for that and hands out the client, to
// insert and cancel jobs. Close stops River gracefully (running jobs get a
// grace period, then their contexts end) and waits for everything the
// Node started.
package cluster
