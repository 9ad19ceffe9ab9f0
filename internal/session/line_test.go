package session_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// TestTranscriptLineFormat: a transcript line is Claude Code's — camelCase
// keys in a fixed order, empty optional ones left out, no HTML escaping —
// though Entry's own JSON is the API's; the golden lines were written by
// the struct with Claude Code's tags that Entry replaced. Each reads back
// as the entry it was.
func TestTranscriptLineFormat(t *testing.T) {
	at := time.Date(2026, 11, 29, 7, 0, 0, 123456789, time.UTC)
	msg := llm.UserText(`<task-notification> "quoted" & <b>bold</b> ` + "\u2028 tab\t")
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("done"), {Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)}}}
	for _, tc := range []struct {
		name string
		e    session.Entry
	}{
		{"empty", session.Entry{}},
		{"user", session.Entry{Type: session.EntryUser, UUID: "u1", SessionID: "s", Timestamp: at, Message: &msg}},
		{"assistant", session.Entry{Type: session.EntryAssistant, UUID: "u2", ParentUUID: "u1", SessionID: "s", Timestamp: at, Message: &reply,
			MessageID: "msg_1", Model: "claude-x", StopReason: "tool_use", Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5}}},
		{"summary", session.Entry{Type: session.EntrySummary, UUID: "u3", SessionID: "s", Timestamp: at, Message: &msg, Subtype: session.SubtypeCompactBoundary,
			Data: json.RawMessage(`{"trigger":"auto","pre_tokens":9}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := session.EncodeEntry(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "line", tc.name+".jsonl"), got)
			back, err := session.DecodeEntry(got)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.e, back); d != "" {
				t.Errorf("DecodeEntry(EncodeEntry(e)) differs from e (-want +got):\n%s", d)
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
