package record

import (
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Session is the index record of a session: a main agent's conversation or
// a subagent's. `cadre sessions --json` and the HTTP API write it in the
// API's shape (internal/server).
//
// Stores keep Created and Updated to the millisecond and return them in
// UTC, so that every store answers alike (and orders alike).
type Session struct {
	ID       string
	ParentID string // the parent session of a subagent's; "" for a main session
	Agent    string // "main", or the subagent's type
	// Key is the routing key of a subagent's session,
	// "agent:<agentId>:subagent:<uuid>"; "" for a main session.
	Key   string
	Title string
	Cwd   string

	Status           SessionStatus
	Created, Updated time.Time

	// Usage, CostUSD and NumTurns are the session's totals over all its runs.
	Usage    llm.Usage
	CostUSD  llm.Cost
	NumTurns int
	// Model is the model the session's agent ran on, as
	// "provider:model" ("" for a session recorded before cadre kept it).
	Model string

	// TranscriptPath is the JSONL transcript.
	TranscriptPath string
	// Owner is the process running the session (a task owner id), kept
	// while it runs, so that a crash can be told from a live run.
	Owner string
}

// SessionStatus is where a session is.
type SessionStatus string

// Session statuses.
const (
	SessionRunning   SessionStatus = "running"
	SessionIdle      SessionStatus = "idle"
	SessionCompleted SessionStatus = "completed"
	SessionFailed    SessionStatus = "failed"
	SessionKilled    SessionStatus = "killed"
)

// Valid reports whether s is one of the defined statuses.
func (s SessionStatus) Valid() bool {
	switch s {
	case SessionRunning, SessionIdle, SessionCompleted, SessionFailed, SessionKilled:
		return true
	}
	return false
}

// Ended reports whether s is a status a session ends with.
func (s SessionStatus) Ended() bool {
	return s == SessionCompleted || s == SessionFailed || s == SessionKilled
}
