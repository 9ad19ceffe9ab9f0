// Package lane bounds how many runs go on at once. The Lane is the
// subagent lane (S-C2): a run started in the background waits for a place,
// pending; a run moved to the background while it runs joins, ahead of
// every run still waiting to start. Places bound the foreground runs in
// flight at one depth (subagents.maxForegroundConcurrent).
//
// A pending run is a Waiter, not a goroutine: a thousand runs queued behind
// a lane of 64 would otherwise hold a thousand stacks.
package lane
