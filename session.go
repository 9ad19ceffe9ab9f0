package cadre

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
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

func transcriptEntryOf(e session.Entry) TranscriptEntry {
	return TranscriptEntry{
		Type: e.Type, UUID: e.UUID, ParentUUID: e.ParentUUID, SessionID: e.SessionID, Timestamp: e.Timestamp, Message: e.Message,
		MessageID: e.MessageID, Model: e.Model, StopReason: e.StopReason, Usage: e.Usage, Subtype: e.Subtype, Data: e.Data,
	}
}
