package cadre

import (
	"github.com/cadre-dev/cadre/record"
)

// Session is the index record of a session: a main agent's conversation or
// a subagent's (record.Session, the very record the store keeps).
type Session = record.Session

// SessionStatus is where a session is.
type SessionStatus = record.SessionStatus

// Session statuses.
const (
	SessionRunning   = record.SessionRunning
	SessionIdle      = record.SessionIdle
	SessionCompleted = record.SessionCompleted
	SessionFailed    = record.SessionFailed
	SessionKilled    = record.SessionKilled
)

// TranscriptEntry is one line of a session's transcript (record's).
type TranscriptEntry = record.TranscriptEntry
