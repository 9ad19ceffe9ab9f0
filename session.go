package cadre

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// Session is the index record of a session: a main agent's conversation or
// a subagent's. `cadre sessions --json` and the HTTP API write it in the
// API's shape (internal/server).
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
	// Owner is the process running the session, kept while it runs.
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

// TranscriptEntry is one line of a session's transcript. Its JSON (cadre
// sessions show --json, the HTTP API) has snake_case keys, as every JSON
// cadre writes for people and scripts; the transcript file itself keeps
// Claude Code's line format.
type TranscriptEntry struct {
	// Type is "user", "assistant", "system" or "summary".
	Type       string       `json:"type"`
	UUID       string       `json:"uuid"`
	ParentUUID string       `json:"parent_uuid,omitempty"`
	SessionID  string       `json:"session_id"`
	Timestamp  time.Time    `json:"timestamp"`
	Message    *llm.Message `json:"message,omitempty"`

	// Assistant metadata.
	MessageID  string     `json:"message_id,omitempty"`
	Model      string     `json:"model,omitempty"`
	StopReason string     `json:"stop_reason,omitempty"`
	Usage      *llm.Usage `json:"usage,omitempty"`

	// Subtype and Data carry what other entries need (a compaction
	// boundary's details).
	Subtype string          `json:"subtype,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func sessionOf(in session.Info) Session {
	return Session{
		ID: in.ID, ParentID: in.ParentID, Agent: in.Agent, Key: in.Key, Title: in.Title, Cwd: in.Cwd,
		Status: SessionStatus(in.Status), Created: in.Created, Updated: in.Updated,
		Usage: in.Usage, CostUSD: in.CostUSD, NumTurns: in.NumTurns, Model: in.Model, TranscriptPath: in.TranscriptPath, Owner: in.Owner,
	}
}

func transcriptEntryOf(e session.Entry) TranscriptEntry {
	return TranscriptEntry{
		Type: e.Type, UUID: e.UUID, ParentUUID: e.ParentUUID, SessionID: e.SessionID, Timestamp: e.Timestamp, Message: e.Message,
		MessageID: e.MessageID, Model: e.Model, StopReason: e.StopReason, Usage: e.Usage, Subtype: e.Subtype, Data: e.Data,
	}
}
