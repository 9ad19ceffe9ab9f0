package record

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// TranscriptEntry is one line of a session's transcript: a message, or a
// summary that replaced older ones. Its JSON here (cadre sessions show
// --json, the HTTP API) has snake_case keys, as every JSON cadre writes
// for people and scripts; the transcript file itself keeps Claude Code's
// line format, which the runtime writes and reads by hand from the same
// value (internal/session, EncodeEntry).
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
	// boundary's details, the inputs an approver changed).
	Subtype string          `json:"subtype,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}
