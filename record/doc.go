// Package record holds the records cadre keeps and the states they move
// through: a session's index record (Session, SessionStatus), a background
// task's record (Task) with its statuses and kinds (TaskStatus, TaskKind),
// a team's shared task as SDK users see it (TeamTask) and a line of a
// session's transcript (TranscriptEntry).
//
// It is vocabulary shared without copies: the SDK (package cadre)
// re-exports these types under its own names with type aliases, and the
// runtime's internal packages (the session index, the task store, the
// transcript writers) use the very same types, so those are not converted
// on their way to an SDK user. (TeamTask is the SDK's view of the task
// list's richer item.) It imports nothing of cadre but the public llm
// package. docs/sdk.md ("Vocabulary packages") says why.
package record
