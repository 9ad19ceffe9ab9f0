// Package jsonpart writes JSON a part at a time, each part encoded by
// encoding/json exactly as it would encode the whole.
//
// encoding/json builds a value's whole text in a buffer it takes from a
// pool and puts back, grown, after the call; a value it meets as a
// json.Marshaler is encoded into a buffer of its own and copied again.
// For the one message of a launch of 10,000 background agents — 10,000
// tool results, 12 MB of text — a transcript line held that text four
// times over, and the pooled buffers kept 16 MB each until the collector
// cleared the pool: about 55 MB of a 10,000-child run's peak of 220. Here
// an array is written element by element through a small buffer that is
// reused, so the text is never whole in memory except where the caller
// needs it whole (a transcript line, written in one call).
package jsonpart
