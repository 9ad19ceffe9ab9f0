// Package record holds the records cadre keeps and the states they move
// through: a session's index record (Session, SessionStatus) and the
// statuses and kinds of background tasks (TaskStatus, TaskKind).
//
// It is vocabulary shared without copies: the SDK (package cadre)
// re-exports these types under its own names with type aliases, and the
// runtime's internal packages (the session index, the task store) use the
// very same types, so no value is converted field by field on its way to
// an SDK user. It imports nothing of cadre but the public llm package.
// docs/sdk.md ("Vocabulary packages") says why.
package record
