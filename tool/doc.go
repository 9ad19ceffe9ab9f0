// Package tool defines what a tool is to cadre: a name, a model-facing
// description, a JSON input schema, a few traits the runtime schedules and
// permits by (read-only, concurrency-safe, what it touches), and a Call.
//
// Typed builds a Tool from a Go input struct, inferring its schema; Set is
// the pool of tools one session's model sees, and validates every call's
// input against the tool's schema before the tool runs.
//
// A call that waits for something other than the machine gives its place
// among the calls running at once up (Yield); background work a call
// launches starts once its batch of calls has launched all it launches
// (AfterLaunches).
package tool
