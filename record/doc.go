// Package record holds the records cadre keeps and the states they move
// through: a session's index record (Session, SessionStatus), the
// statuses and kinds of background tasks (TaskStatus, TaskKind), a task as
// SDK users see it (Task), a team's shared task (TeamTask) and a line of
// a session's transcript (TranscriptEntry).
//
// It is vocabulary shared without copies: the SDK (package cadre)
// re-exports these types under its own names with type aliases, and the
// runtime's internal packages (the session index, the task store) use the
// very same Session, statuses and kinds, so those are not converted on
// their way to an SDK user. (Task and TeamTask are the SDK's views of the
// store's richer records.) It imports nothing of cadre but the public llm package.
// docs/sdk.md ("Vocabulary packages") says why.
package record
