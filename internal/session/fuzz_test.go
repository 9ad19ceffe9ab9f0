package session_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
	"github.com/cadre-dev/cadre/llm"
)

// FuzzResumeTranscript feeds transcript files to what resuming a session
// does with them: read every entry, rebuild the model context, and open
// the file to append. A transcript is outside input: a killed process
// leaves half-written lines, and a user may edit the file. Beyond not
// panicking: reading is quick, every problem names the file and a line
// inside it without repeating more than an excerpt of it, every entry
// read re-encodes to what re-parses the same, the rebuilt context answers
// every tool call exactly, and appending after a damaged tail leaves what
// was readable readable and reads back what was appended.
func FuzzResumeTranscript(f *testing.F) {
	good := `{"type":"user","uuid":"a","sessionId":"s","timestamp":"2026-05-01T12:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n" +
		`{"type":"assistant","uuid":"b","parentUuid":"a","sessionId":"s","timestamp":"2026-05-01T12:00:01Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.go"}}]},"model":"m","usage":{"input_tokens":3}}` + "\n" +
		`{"type":"user","uuid":"c","parentUuid":"b","sessionId":"s","timestamp":"2026-05-01T12:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package a"}]}}` + "\n" +
		`{"type":"summary","subtype":"compact_boundary","uuid":"d","sessionId":"s","timestamp":"2026-05-01T12:00:03Z","message":{"role":"user","content":[{"type":"text","text":"summary"}]},"data":{"trigger":"auto","pre_tokens":9,"kept":[{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"LS","input":{}}]}]}}` + "\n"
	f.Add([]byte(good))
	f.Add([]byte(good[:len(good)-40])) // killed mid-write
	f.Add([]byte(good + `{"type":"us`))
	f.Add([]byte(`{"type":"us`))
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.HasPrefix(s, "{") }) {
		f.Add([]byte(s + "\n"))
		f.Add([]byte(s))
	}

	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++ // a fresh file per input: OpenWriter keeps what it finds
		path := filepath.Join(dir, strconv.Itoa(n)+".jsonl")
		defer os.Remove(path)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}

		var entries []session.Entry
		var problems []string
		var err error
		fuzzcheck.Timed(t, len(data), func() { entries, problems, err = session.ReadTranscript(path) })
		if err != nil {
			t.Fatalf("ReadTranscript of a readable file: %v", err)
		}
		checkProblems(t, path, data, problems)
		for i, e := range entries {
			if e.Type == "" {
				t.Errorf("entry %d has no type", i)
			}
			checkReencodes(t, e)
		}

		again, _, _ := session.ReadTranscript(path)
		msgs := session.Messages(entries)
		if !reflect.DeepEqual(entries, again) {
			t.Errorf("Messages changed the entries it was given")
		}
		checkAnswered(t, msgs)

		// Resume: append to what is there, then read it all back.
		w, err := session.OpenWriter(path)
		if err != nil {
			t.Fatalf("OpenWriter: %v", err)
		}
		added := session.Entry{Type: session.EntryUser, UUID: "fuzz-appended", SessionID: "s", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("resumed")}}}
		if err := w.Append(added); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		after, _, err := session.ReadTranscript(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(entries)+1 {
			t.Fatalf("after appending one entry: %d entries, want %d", len(after), len(entries)+1)
		}
		if len(entries) > 0 && !reflect.DeepEqual(after[:len(entries)], entries) {
			t.Errorf("appending changed the entries before it:\n%+v\n%+v", entries, after[:len(entries)])
		}
		if last := after[len(entries)]; last.UUID != added.UUID || !reflect.DeepEqual(last.Message, added.Message) {
			t.Errorf("appended entry read back as %+v", last)
		}
	})
}

var problemLine = regexp.MustCompile(`^(.*?):(\d+): `)

func checkProblems(t *testing.T, path string, data []byte, problems []string) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, p := range problems {
		m := problemLine.FindStringSubmatch(p)
		if m == nil || m[1] != path {
			t.Errorf("problem %q does not start with %s:LINE:", p, path)
			continue
		}
		if n, _ := strconv.Atoi(m[2]); n < 1 || n > lines {
			t.Errorf("problem %q is on line %d of a file of %d lines", p, n, lines)
		}
		fuzzcheck.NoEcho(t, "problem", string(data), p)
	}
}

// checkReencodes checks that e, written as a Writer writes it, reads back
// as the same entry: a resumed session's entries survive being copied
// (forks copy transcripts).
func checkReencodes(t *testing.T, e session.Entry) {
	t.Helper()
	first, err := json.Marshal(e)
	if err != nil {
		t.Errorf("entry %s read from a transcript cannot be written back: %v", e.UUID, err)
		return
	}
	var back session.Entry
	if err := json.Unmarshal(first, &back); err != nil {
		t.Errorf("entry %s written as %s does not read back: %v", e.UUID, first, err)
		return
	}
	second, err := json.Marshal(back)
	if err != nil || !bytes.Equal(first, second) {
		t.Errorf("entry %s re-encodes differently:\n%s\n%s (%v)", e.UUID, first, second, err)
	}
}

// checkAnswered checks what providers require of a history: every
// tool_use is answered in the next message, which is not an assistant
// message, and no tool_result answers a call the message before it did
// not make.
func checkAnswered(t *testing.T, msgs []llm.Message) {
	t.Helper()
	var pending map[string]bool
	for i, m := range msgs {
		if m.Role != llm.RoleAssistant {
			for _, b := range m.Content {
				if b.Type != llm.BlockToolResult {
					continue
				}
				if !pending[b.ToolUseID] {
					t.Errorf("message %d: tool_result for %q answers no call of the message before", i, b.ToolUseID)
				}
				delete(pending, b.ToolUseID)
			}
			if len(m.Content) == 0 {
				t.Errorf("message %d is an empty user message", i)
			}
		}
		if len(pending) > 0 {
			t.Errorf("message %d: tool calls %v are not answered", i, pending)
		}
		pending = nil
		if m.Role == llm.RoleAssistant {
			pending = map[string]bool{}
			for _, b := range m.Content {
				if b.Type == llm.BlockToolUse {
					pending[b.ID] = true
				}
			}
		}
	}
	if len(pending) > 0 {
		t.Errorf("the last message's tool calls %v are not answered", pending)
	}
}
