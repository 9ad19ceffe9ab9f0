package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

func openWriter(t *testing.T, path string) *session.Writer {
	t.Helper()
	w, err := session.OpenWriter(path)
	if err != nil {
		t.Fatalf("OpenWriter: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func appendAll(t *testing.T, w *session.Writer, entries ...session.Entry) {
	t.Helper()
	for _, e := range entries {
		if err := w.Append(e); err != nil {
			t.Fatalf("Append(%s %s): %v", e.Type, e.UUID, err)
		}
	}
}

func readAll(t *testing.T, path string) ([]session.Entry, []string) {
	t.Helper()
	entries, problems, err := session.ReadTranscript(path)
	if err != nil {
		t.Fatalf("ReadTranscript: %v", err)
	}
	return entries, problems
}

var ts = time.Date(2026, 5, 1, 12, 0, 0, 123_456_789, time.UTC)

func TestTranscriptRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "s1.jsonl") // OpenWriter creates dirs
	w := openWriter(t, path)
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockThinking, Thinking: "hmm", Signature: "sig"},
		llm.Text("Let me look. <task-notification> & more"),
		llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path": "a.go"}`)),
	}}
	want := []session.Entry{
		{Type: session.EntryUser, UUID: "u1", SessionID: "s1", Timestamp: ts, Message: ptr(llm.UserText("hello\nworld"))},
		{Type: session.EntryAssistant, UUID: "u2", ParentUUID: "u1", SessionID: "s1", Timestamp: ts, Message: &msg,
			MessageID: "msg_1", Model: "claude-x", StopReason: "tool_use",
			Usage: &llm.Usage{InputTokens: 10, OutputTokens: 20, CacheCreationInputTokens: 30, CacheReadInputTokens: 40}},
		{Type: session.EntrySystem, UUID: "u3", ParentUUID: "u2", SessionID: "s1", Timestamp: ts,
			Subtype: "task_started", Data: json.RawMessage(`{"task_id":"t1"}`)},
		{Type: session.EntrySummary, UUID: "u4", ParentUUID: "u3", SessionID: "s1", Timestamp: ts, Data: json.RawMessage(`"short"`)},
	}
	for _, e := range want {
		e.ParentUUID = "" // the writer chains them
		appendAll(t, w, e)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want[1].Message.Content[2].Input = json.RawMessage(`{"path":"a.go"}`) // stored compact

	got, problems := readAll(t, path)
	if len(problems) > 0 {
		t.Errorf("problems: %q", problems)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadTranscript (-want +got):\n%s", diff)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(raw), "\n"); lines != len(want) {
		t.Errorf("file has %d lines, want one per entry (%d)", lines, len(want))
	}
	if !bytes.Contains(raw, []byte("<task-notification> & more")) {
		t.Errorf("HTML characters were escaped in the transcript:\n%s", raw)
	}
	for _, key := range []string{`"parentUuid":"u1"`, `"sessionId":"s1"`, `"stopReason":"tool_use"`, `"timestamp":"2026-05-01T12:00:00.123456789Z"`} {
		if !bytes.Contains(raw, []byte(key)) {
			t.Errorf("transcript lacks %s:\n%s", key, raw)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode = %v (err %v), want 0600", st.Mode().Perm(), err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestAppendFillsUUIDTimestampParent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	before := time.Now()
	appendAll(t, w,
		session.Entry{Type: session.EntryUser},
		session.Entry{Type: session.EntryAssistant},
		session.Entry{Type: session.EntrySystem, ParentUUID: "explicit"},
	)
	got, _ := readAll(t, path)
	if len(got) != 3 {
		t.Fatalf("read %d entries, want 3", len(got))
	}
	for i, e := range got {
		if len(e.UUID) != 36 {
			t.Errorf("entry %d: UUID = %q, want a generated UUID", i, e.UUID)
		}
		if e.Timestamp.Before(before.Add(-time.Second)) || e.Timestamp.After(time.Now().Add(time.Second)) {
			t.Errorf("entry %d: Timestamp = %v, want about now", i, e.Timestamp)
		}
	}
	if got[0].UUID == got[1].UUID {
		t.Errorf("two entries got the same UUID %q", got[0].UUID)
	}
	if got[0].ParentUUID != "" || got[1].ParentUUID != got[0].UUID || got[2].ParentUUID != "explicit" {
		t.Errorf("parents = %q, %q, %q; want \"\", %q, \"explicit\"", got[0].ParentUUID, got[1].ParentUUID, got[2].ParentUUID, got[0].UUID)
	}
}

func TestReopenContinuesParentChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	appendAll(t, w, session.Entry{Type: session.EntryUser, UUID: "a"}, session.Entry{Type: session.EntryAssistant, UUID: "b"})
	w.Close()

	w2 := openWriter(t, path)
	appendAll(t, w2, session.Entry{Type: session.EntryUser, UUID: "c"})
	got, _ := readAll(t, path)
	if n := len(got); n != 3 || got[2].ParentUUID != "b" {
		t.Fatalf("after reopening, entries = %+v; want 3 with the last one's parent \"b\"", got)
	}
}

func TestAppendAfterClose(t *testing.T) {
	w := openWriter(t, filepath.Join(t.TempDir(), "s.jsonl"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if err := w.Append(session.Entry{Type: session.EntryUser}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Append after Close = %v, want os.ErrClosed", err)
	}
}

func TestAppendRejectsInvalidData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	if err := w.Append(session.Entry{Type: session.EntrySystem, Data: json.RawMessage(`{not json`)}); err == nil {
		t.Fatal("Append with invalid Data succeeded")
	}
	appendAll(t, w, session.Entry{Type: session.EntryUser, UUID: "ok"})
	got, problems := readAll(t, path)
	if len(got) != 1 || got[0].ParentUUID != "" || len(problems) > 0 {
		t.Errorf("after a refused entry: entries %+v, problems %q; want just the good one, unchained", got, problems)
	}
}

// TestConcurrentAppends checks that concurrent appends never interleave:
// every line must be a whole entry.
func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	const writers, each = 8, 50
	big := strings.Repeat("x", 20_000) // larger than a pipe buffer page, to tempt interleaving
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				errs <- w.Append(session.Entry{
					Type:    session.EntryUser,
					UUID:    fmt.Sprintf("g%d-%d", g, i),
					Message: ptr(llm.UserText(big)),
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	got, problems := readAll(t, path)
	if len(problems) > 0 {
		t.Fatalf("interleaved lines: %q", problems[0])
	}
	if len(got) != writers*each {
		t.Fatalf("read %d entries, want %d", len(got), writers*each)
	}
	seen := map[string]bool{}
	for i, e := range got {
		seen[e.UUID] = true
		if e.Message.Text() != big {
			t.Fatalf("entry %d (%s) has a damaged message", i, e.UUID)
		}
		// The parent chain is a total order even under concurrency.
		if i > 0 && e.ParentUUID != got[i-1].UUID {
			t.Fatalf("entry %d: parent %q, want the previous line's %q", i, e.ParentUUID, got[i-1].UUID)
		}
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct entries, want %d", len(seen), writers*each)
	}
}

// TestTruncatedLastLine simulates a process killed mid-write.
func TestTruncatedLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	appendAll(t, w,
		session.Entry{Type: session.EntryUser, UUID: "a", Message: ptr(llm.UserText("one"))},
		session.Entry{Type: session.EntryAssistant, UUID: "b", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("two")}}},
	)
	w.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"user","uuid":"c","sessionId":"s","message":{"role":"us`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	got, problems := readAll(t, path)
	if diff := cmp.Diff([]string{"a", "b"}, uuids(got)); diff != "" {
		t.Errorf("entries before the truncated line (-want +got):\n%s", diff)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], path+":3: truncated entry skipped") {
		t.Errorf("problems = %q, want one naming %s:3 as truncated", problems, path)
	}

	// Reopening terminates the partial line, and new entries chain to the
	// last good one.
	w2 := openWriter(t, path)
	appendAll(t, w2,
		session.Entry{Type: session.EntryUser, UUID: "d", Message: ptr(llm.UserText("three"))},
		session.Entry{Type: session.EntryUser, UUID: "e"},
	)
	w2.Close()
	got, problems = readAll(t, path)
	if diff := cmp.Diff([]string{"a", "b", "d", "e"}, uuids(got)); diff != "" {
		t.Errorf("entries after reopening (-want +got):\n%s", diff)
	}
	if got[2].ParentUUID != "b" {
		t.Errorf("first entry after the damage has parent %q, want \"b\"", got[2].ParentUUID)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], path+":3: malformed entry skipped") {
		t.Errorf("problems = %q, want only line 3 reported (now terminated, so malformed)", problems)
	}
}

func TestReopenAfterOnlyAPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"us`), 0o600); err != nil {
		t.Fatal(err)
	}
	w := openWriter(t, path)
	appendAll(t, w, session.Entry{Type: session.EntryUser, UUID: "a"})
	got, problems := readAll(t, path)
	if len(got) != 1 || got[0].UUID != "a" || got[0].ParentUUID != "" || len(problems) != 1 {
		t.Errorf("entries %+v, problems %q; want entry a without parent and one problem", got, problems)
	}
}

func TestReadTranscriptTolerance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	content := strings.Join([]string{
		`{"type":"user","uuid":"a","sessionId":"s","timestamp":"2026-05-01T12:00:00Z"}`,
		`this is not json`,
		``,
		`{"uuid":"no-type","sessionId":"s"}`,
		`{"type":"assistant","uuid":"b","sessionId":"s","unknownField":1,"timestamp":"2026-05-01T12:00:00Z"}`,
		`{"type":"user","uuid":"c","sessionId":"s","message":{"role":"user","content":"not an array"}}`,
		`{"type":"future-kind","uuid":"d","sessionId":"s","timestamp":"2026-05-01T12:00:00Z"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	got, problems := readAll(t, path)
	if diff := cmp.Diff([]string{"a", "b", "d"}, uuids(got)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	wantProblems := []string{path + ":2: malformed entry skipped", path + ":4: entry without a \"type\" skipped", path + ":6: malformed entry skipped"}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems = %q, want %d", problems, len(wantProblems))
	}
	for i, w := range wantProblems {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, problems[i], w)
		}
	}
}

func TestReadTranscriptMissingFile(t *testing.T) {
	_, _, err := session.ReadTranscript(filepath.Join(t.TempDir(), "missing.jsonl"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadTranscript of a missing file: err = %v, want fs.ErrNotExist", err)
	}
}

func TestReadTranscriptLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	huge := strings.Repeat("y", 3<<20) // beyond bufio.Scanner's default limit
	appendAll(t, w, session.Entry{Type: session.EntryUser, UUID: "a", Message: ptr(llm.UserText(huge))}, session.Entry{Type: session.EntryUser, UUID: "b"})
	got, problems := readAll(t, path)
	if len(got) != 2 || len(problems) > 0 || got[0].Message.Text() != huge {
		t.Errorf("long line: %d entries, problems %q", len(got), problems)
	}
}

func uuids(entries []session.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.UUID
	}
	return out
}

func BenchmarkAppendEntry(b *testing.B) {
	w, err := session.OpenWriter(filepath.Join(b.TempDir(), "s.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text(strings.Repeat("A typical paragraph of model output. ", 20)),
		llm.ToolUse("toolu_01", "Read", json.RawMessage(`{"file_path":"/work/project/main.go"}`)),
	}}
	usage := &llm.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 9000}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Append(session.Entry{Type: session.EntryAssistant, SessionID: "s", Message: msg, Model: "claude-x", Usage: usage}); err != nil {
			b.Fatal(err)
		}
	}
}

// batchSink is a LinesSink that keeps what it is given, counting calls,
// and fails a batch (keeping none of it) while fail is set.
type batchSink struct {
	lines         [][]byte
	calls, lines1 int
	fail          error
}

func (s *batchSink) AppendLine(line []byte) error {
	s.lines1++
	return s.AppendLines([][]byte{line})
}

func (s *batchSink) AppendLines(lines [][]byte) error {
	s.calls++
	if s.fail != nil {
		return s.fail
	}
	s.lines = append(s.lines, lines...)
	return nil
}

func (s *batchSink) Close() error { return nil }

// TestAppendAllBatch: a sink that takes batches gets a writer's AppendAll
// in one call, chained to the entry before and to each other; a failed
// batch is not chained to, the next entry's parent being the last one
// kept.
func TestAppendAllBatch(t *testing.T) {
	sink := &batchSink{}
	w := session.NewWriter("mem:s", sink, "before")
	n, err := w.AppendAll([]session.Entry{{Type: session.EntryUser, UUID: "a"}, {Type: session.EntryUser, UUID: "b"}, {Type: session.EntryUser, UUID: "c", ParentUUID: "explicit"}})
	if n != 3 || err != nil {
		t.Fatalf("AppendAll = %d, %v; want 3, nil", n, err)
	}
	if sink.calls != 1 || sink.lines1 != 0 {
		t.Errorf("the sink got %d batches and %d single lines, want 1 batch", sink.calls, sink.lines1)
	}
	sink.fail = errors.New("server gone")
	if n, err := w.AppendAll([]session.Entry{{Type: session.EntryUser, UUID: "lost1"}, {Type: session.EntryUser, UUID: "lost2"}}); n != 0 || !errors.Is(err, sink.fail) {
		t.Fatalf("AppendAll on a failing sink = %d, %v; want 0 and its error", n, err)
	}
	sink.fail = nil
	if err := w.Append(session.Entry{Type: session.EntryUser, UUID: "d"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range sink.lines {
		e, err := session.DecodeEntry(l)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.ParentUUID+">"+e.UUID)
	}
	if want := []string{"before>a", "a>b", "explicit>c", "c>d"}; !slices.Equal(got, want) {
		t.Errorf("parent>uuid of the kept lines = %q, want %q", got, want)
	}
}

// TestAppendAllFile: a transcript file takes AppendAll's entries line by
// line, in order and chained, and after a refused entry keeps those before
// it and says how many.
func TestAppendAllFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := openWriter(t, path)
	n, err := w.AppendAll([]session.Entry{
		{Type: session.EntryUser, UUID: "a"},
		{Type: session.EntryUser, UUID: "b"},
		{Type: session.EntrySystem, UUID: "bad", Data: json.RawMessage(`{not json`)},
		{Type: session.EntryUser, UUID: "never"},
	})
	if n != 2 || err == nil {
		t.Fatalf("AppendAll with a bad third entry = %d, %v; want 2 and an error", n, err)
	}
	appendAll(t, w, session.Entry{Type: session.EntryUser, UUID: "c"})
	got, problems := readAll(t, path)
	var chain []string
	for _, e := range got {
		chain = append(chain, e.ParentUUID+">"+e.UUID)
	}
	if want := []string{">a", "a>b", "b>c"}; !slices.Equal(chain, want) || len(problems) > 0 {
		t.Errorf("parent>uuid = %q (problems %q), want %q", chain, problems, want)
	}
}
