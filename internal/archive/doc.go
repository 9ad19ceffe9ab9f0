// Package archive moves finished child sessions out of the way (S-S3):
// right after their notification when a run asked for cleanup "delete",
// or by the sweep each start-up makes of those that ended long enough ago.
// A transcript in a file is renamed, kept on disk; one in a store is
// marked so; the session index follows, so the agent can still be resumed.
package archive
