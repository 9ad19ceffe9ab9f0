// Package progress keeps background runs' progress summaries (S-F3): now
// and then a forked model call, sharing the run's prompt prefix, says in
// one line what the run is doing, and the line goes to its task record for
// TaskList and `cadre tasks`. The run is never held up for it.
package progress
