// Package tasklist is a team's shared task list (DESIGN S-A6): the items
// that teammates create, claim, block on each other and complete through
// Claude Code's TaskCreate, TaskGet, TaskList and TaskUpdate tools.
//
// It is not package task, which holds the runs (background agents, shells)
// of a session. An item here is a unit of planned work with a subject, a
// status (pending → in_progress → completed, or deleted), an owner and
// dependencies (blocks / blockedBy).
//
// The rules live here, once, as operations on a List value (ops.go): who
// may claim an item (only an unowned, unblocked, pending one), how edges
// are kept symmetric, what deleting removes. A Store only has to apply a
// function to one list atomically (Store.UpdateList); the memory store
// here, and the SQLite and PostgreSQL stores in internal/store, do, and
// tasklisttest checks every one of them under concurrent claimers.
package tasklist
