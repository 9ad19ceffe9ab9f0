package session_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// claudeCodeLine is the transcript line's shape as Claude Code writes it,
// kept here only as the reference EncodeEntry and DecodeEntry must match
// byte for byte: the runtime's Entry has the API's JSON tags.
type claudeCodeLine struct {
	Type       string          `json:"type"`
	UUID       string          `json:"uuid"`
	ParentUUID string          `json:"parentUuid,omitempty"`
	SessionID  string          `json:"sessionId"`
	Timestamp  time.Time       `json:"timestamp"`
	Message    *llm.Message    `json:"message,omitempty"`
	MessageID  string          `json:"messageId,omitempty"`
	Model      string          `json:"model,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      *llm.Usage      `json:"usage,omitempty"`
	Subtype    string          `json:"subtype,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

func TestTranscriptLineFormat(t *testing.T) {
	at := time.Date(2026, 11, 29, 7, 0, 0, 123456789, time.UTC)
	msg := llm.UserText(`<task-notification> "quoted" & <b>bold</b> ` + "\u2028 tab\t")
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("done"), {Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{ "file_path" : "a.go" }`)}}}
	for _, tc := range []struct {
		name string
		e    session.Entry
	}{
		{"empty", session.Entry{}},
		{"user", session.Entry{Type: session.EntryUser, UUID: "u1", SessionID: "s", Timestamp: at, Message: &msg}},
		{"assistant", session.Entry{Type: session.EntryAssistant, UUID: "u2", ParentUUID: "u1", SessionID: "s", Timestamp: at, Message: &reply,
			MessageID: "msg_1", Model: "claude-x", StopReason: "tool_use", Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5}}},
		{"summary", session.Entry{Type: session.EntrySummary, UUID: "u3", SessionID: "s", Timestamp: at, Message: &msg, Subtype: session.SubtypeCompactBoundary,
			Data: json.RawMessage(`{"trigger": "auto",  "pre_tokens": 9}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(claudeCodeLine(tc.e)); err != nil {
				t.Fatal(err)
			}
			got, err := session.EncodeEntry(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want.String() {
				t.Fatalf("EncodeEntry\n got %s\nwant %s", got, want.String())
			}
			back, err := session.DecodeEntry(got)
			if err != nil {
				t.Fatal(err)
			}
			var ref claudeCodeLine
			if err := json.Unmarshal(got, &ref); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(session.Entry(ref), back); d != "" {
				t.Errorf("DecodeEntry differs from decoding Claude Code's shape (-want +got):\n%s", d)
			}
		})
	}
}

// TestDecodeEntryRefuses: what is not one transcript line is an error, a
// Claude Code line's other keys are not.
func TestDecodeEntryRefuses(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{`[1]`, "cannot unmarshal array"},
		{`{"type":"user"} {"type":"user"}`, "after top-level value"},
		{`{"type":7}`, "type"},
		{`{"timestamp":"yesterday"}`, "yesterday"},
		{`{"type":"us`, "unexpected end"},
	} {
		if _, err := session.DecodeEntry([]byte(tc.line)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeEntry(%s) = %v, want an error with %q", tc.line, err, tc.want)
		}
	}
	e, err := session.DecodeEntry([]byte(`{"cwd":"/w","type":"user","isSidechain":false,"uuid":"u","sessionId":"s","version":"2.1.330","gitBranch":"main","userType":"external","timestamp":"2026-05-01T12:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`))
	if err != nil || e.Type != "user" || e.UUID != "u" || e.SessionID != "s" || e.Message == nil {
		t.Errorf("a Claude Code line read as %+v, %v", e, err)
	}
}
