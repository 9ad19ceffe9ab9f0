package cadre

import "github.com/cadre-dev/cadre/internal/app"

// Dispatch says where a background run executes when several cadre
// processes share a PostgreSQL store (settings store.dispatch).
type Dispatch string

const (
	// DispatchSticky runs it in the process whose agent started it, as
	// with the SQLite store.
	//
	// The values are the settings' (store.dispatch), written out so that
	// go doc shows them rather than an internal name.
	DispatchSticky Dispatch = "sticky"
	// DispatchAny queues it for any process with a free place in its
	// lane, this one included.
	DispatchAny Dispatch = "any"
)

// ErrStateNotWritable is the error of a runtime whose state dir
// (CADRE_HOME) it cannot write: an Ephemeral runtime only reads it.
var ErrStateNotWritable = app.ErrStateNotWritable
