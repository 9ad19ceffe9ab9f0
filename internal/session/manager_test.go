package session_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// seams is a deterministic clock (one second per reading) and id source.
type seams struct {
	mu  sync.Mutex
	t   time.Time
	ids int
}

func (s *seams) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t = s.t.Add(time.Second)
	return s.t
}

func (s *seams) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("id-%04d", s.ids)
}

var t0 = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

func newManager(t *testing.T) (*session.Manager, session.Index, string) {
	t.Helper()
	idx := session.NewMem()
	dir := filepath.Join(t.TempDir(), "sessions")
	s := &seams{t: t0}
	return session.NewManager(idx, dir, s.now, s.newID), idx, dir
}

func TestManagerCreate(t *testing.T) {
	m, idx, dir := newManager(t)
	s, err := m.Create(t.Context(), session.Info{Agent: "main", Cwd: "/w", Status: session.StatusCompleted})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 0) })
	want := session.Info{
		ID: "id-0001", Agent: "main", Cwd: "/w", Status: session.StatusRunning,
		Created: t0.Add(time.Second), Updated: t0.Add(time.Second),
		TranscriptPath: filepath.Join(dir, "id-0001.jsonl"),
	}
	if diff := cmp.Diff(want, s.Info); diff != "" {
		t.Errorf("Session.Info (-want +got):\n%s", diff)
	}
	got, err := idx.GetSession(t.Context(), "id-0001")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index record (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(want.TranscriptPath); err != nil {
		t.Errorf("transcript not created: %v", err)
	}
}

func TestManagerCreateRefusals(t *testing.T) {
	m, idx, dir := newManager(t)
	if _, err := m.Create(t.Context(), session.Info{ID: "../escape"}); !errors.Is(err, session.ErrInvalidID) {
		t.Errorf("Create with id ../escape: err = %v, want ErrInvalidID", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the sessions dir (stat err %v)", err)
	}

	s, err := m.Create(t.Context(), session.Info{ID: "given-id", Title: "first"})
	if err != nil {
		t.Fatalf("Create with a given id: %v", err)
	}
	if err := s.Append(session.Entry{Type: session.EntryUser, Message: ptr(llm.UserText("keep me"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(t.Context(), session.Info{ID: "given-id", Title: "second"}); err == nil {
		t.Fatal("Create with a duplicate id succeeded")
	}
	if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 1); err != nil {
		t.Fatal(err)
	}
	entries, _, err := session.ReadTranscript(s.Info.TranscriptPath)
	if err != nil || len(entries) != 1 {
		t.Errorf("the duplicate Create disturbed the transcript: %d entries, err %v", len(entries), err)
	}
	if info, _ := idx.GetSession(t.Context(), "given-id"); info.Title != "first" {
		t.Errorf("the duplicate Create changed the record: Title = %q", info.Title)
	}
}

func TestManagerCreateUnwritableDir(t *testing.T) {
	idx := session.NewMem()
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := session.NewManager(idx, filepath.Join(blocker, "sessions"), nil, nil) // a dir under a file
	_, err := m.Create(t.Context(), session.Info{ID: "s1"})
	if err == nil {
		t.Fatal("Create with an unusable transcript dir succeeded")
	}
	if info, gerr := idx.GetSession(t.Context(), "s1"); gerr != nil || info.Status != session.StatusFailed {
		t.Errorf("record after a failed Create: %+v, err %v; want status failed", info, gerr)
	}
}

func TestManagerAppendFinishResume(t *testing.T) {
	m, idx, _ := newManager(t)
	s, err := m.Create(t.Context(), session.Info{Agent: "main", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	id := s.Info.ID
	steps := []session.Entry{
		{Type: session.EntryUser, Message: ptr(user(llm.Text("list files")))},
		{Type: session.EntryAssistant, Message: ptr(assistant(use("t1"))), Model: "m", StopReason: "tool_use"},
		{Type: session.EntryUser, Message: ptr(user(result("t1")))},
		{Type: session.EntryAssistant, Message: ptr(assistant(llm.Text("two files"), use("t2")))},
		// killed here, while t2 runs
	}
	for _, e := range steps {
		if err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	run1 := llm.Usage{InputTokens: 100, OutputTokens: 10, CacheCreationInputTokens: 5, CacheReadInputTokens: 50}
	if err := s.Finish(t.Context(), session.StatusKilled, run1, llm.USD(0.5), 2); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if s.Info.Status != session.StatusKilled || s.Info.NumTurns != 2 {
		t.Errorf("Session.Info after Finish = %+v", s.Info)
	}
	if err := s.Append(session.Entry{Type: session.EntryUser}); err == nil {
		t.Error("Append after Finish succeeded")
	}
	if err := s.Finish(t.Context(), session.StatusCompleted, run1, llm.Cost{}, 0); err == nil {
		t.Error("second Finish succeeded")
	}

	entries, _, err := session.ReadTranscript(s.Info.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if e.SessionID != id || !strings.HasPrefix(e.UUID, "id-") || e.Timestamp.IsZero() {
			t.Errorf("entry %d: sessionId %q, uuid %q, timestamp %v; want them filled by the session", i, e.SessionID, e.UUID, e.Timestamp)
		}
		if i > 0 && e.ParentUUID != entries[i-1].UUID {
			t.Errorf("entry %d: parent %q, want %q", i, e.ParentUUID, entries[i-1].UUID)
		}
	}

	// Resume.
	s2, msgs, err := m.Open(t.Context(), id)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	wantMsgs := []llm.Message{
		user(llm.Text("list files")), assistant(use("t1")), user(result("t1")),
		assistant(llm.Text("two files"), use("t2")), user(interrupted("t2")),
	}
	if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
		t.Errorf("resumed messages (-want +got):\n%s", diff)
	}
	if s2.Info.Status != session.StatusRunning || len(s2.Problems) != 0 {
		t.Errorf("resumed session: status %q, problems %q", s2.Info.Status, s2.Problems)
	}
	if err := s2.Append(session.Entry{Type: session.EntryUser, Message: ptr(llm.UserText("go on"))}); err != nil {
		t.Fatal(err)
	}
	run2 := llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4}
	if err := s2.Finish(t.Context(), session.StatusCompleted, run2, llm.USD(0.25), 1); err != nil {
		t.Fatal(err)
	}
	got, err := idx.GetSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != session.StatusCompleted || got.Usage != run1.Add(run2) || got.CostUSD != llm.USD(0.75) || got.NumTurns != 3 {
		t.Errorf("record after two runs: %+v; want completed, usage %+v, cost 0.75, 3 turns", got, run1.Add(run2))
	}
	if diff := cmp.Diff(got, s2.Info); diff != "" {
		t.Errorf("Session.Info differs from the index record (-index +session):\n%s", diff)
	}
	entries, _, _ = session.ReadTranscript(got.TranscriptPath)
	if last := entries[len(entries)-1]; last.ParentUUID != entries[len(entries)-2].UUID {
		t.Errorf("the resumed run's first entry has parent %q, want the last entry before the kill", last.ParentUUID)
	}
}

func TestManagerOpenDamagedTranscript(t *testing.T) {
	m, _, _ := newManager(t)
	s, err := m.Create(t.Context(), session.Info{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(session.Entry{Type: session.EntryUser, Message: ptr(llm.UserText("hi"))}); err != nil {
		t.Fatal(err)
	}
	s.Finish(t.Context(), session.StatusKilled, llm.Usage{}, llm.Cost{}, 0)
	f, err := os.OpenFile(s.Info.TranscriptPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"assistant","mess`)
	f.Close()

	s2, msgs, err := m.Open(t.Context(), s.Info.ID)
	if err != nil {
		t.Fatalf("Open of a transcript with a truncated tail: %v", err)
	}
	defer s2.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 0)
	if diff := cmp.Diff([]llm.Message{llm.UserText("hi")}, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(s2.Problems) != 1 || !strings.Contains(s2.Problems[0], ":2: truncated") {
		t.Errorf("Problems = %q, want line 2 reported", s2.Problems)
	}
}

func TestManagerOpenRefusals(t *testing.T) {
	m, idx, dir := newManager(t)
	// A record whose id is hostile must be refused before any path is built.
	outside := filepath.Join(filepath.Dir(dir), "x.jsonl")
	if err := idx.CreateSession(t.Context(), session.Info{ID: "../x", TranscriptPath: outside}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want error
		msg  string
	}{
		{"../x", session.ErrInvalidID, `invalid session id "../x"`},
		{"a/b", session.ErrInvalidID, `invalid session id "a/b"`},
		{"", session.ErrInvalidID, `invalid session id ""`},
		{"unknown-id", session.ErrNotFound, `"unknown-id"`},
	}
	for _, tt := range tests {
		_, _, err := m.Open(t.Context(), tt.id)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Open(%q) = %v, want %v mentioning %s", tt.id, err, tt.want, tt.msg)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a hostile id touched %s (stat err %v)", outside, err)
	}
}

func TestManagerOpenMissingTranscript(t *testing.T) {
	m, idx, dir := newManager(t)
	if err := idx.CreateSession(t.Context(), session.Info{ID: "gone", TranscriptPath: filepath.Join(dir, "gone.jsonl")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Open(t.Context(), "gone"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open with the transcript deleted: err = %v, want os.ErrNotExist", err)
	}
}

func TestManagerLatest(t *testing.T) {
	m, _, _ := newManager(t)
	createTurns := func(info session.Info, turns int) session.Info {
		t.Helper()
		s, err := m.Create(t.Context(), info)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, turns); err != nil {
			t.Fatal(err)
		}
		return s.Info
	}
	create := func(info session.Info) session.Info { return createTurns(info, 1) }
	if _, err := m.Latest(t.Context(), "/w"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Latest with no sessions: err = %v, want ErrNotFound", err)
	}
	old := create(session.Info{Cwd: "/w"})
	newest := create(session.Info{Cwd: "/w"})
	create(session.Info{Cwd: "/w", ParentID: newest.ID}) // a child, newer still
	create(session.Info{Cwd: "/elsewhere"})
	createTurns(session.Info{Cwd: "/w"}, 0) // opened and left without a message
	got, err := m.Latest(t.Context(), "/w")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != newest.ID {
		t.Errorf("Latest = %s, want %s (not the older %s, nor the child, nor the newer one without a turn)", got.ID, newest.ID, old.ID)
	}
	// With no session that had a turn, the newest of all.
	only := createTurns(session.Info{Cwd: "/v"}, 0)
	if got, err := m.Latest(t.Context(), "/v"); err != nil || got.ID != only.ID {
		t.Errorf("Latest(/v) = %s, %v; want %s", got.ID, err, only.ID)
	}
}

func TestFinishUnknownStatus(t *testing.T) {
	m, _, _ := newManager(t)
	s, err := m.Create(t.Context(), session.Info{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(t.Context(), "done-ish", llm.Usage{}, llm.Cost{}, 0); err == nil {
		t.Error("Finish with an unknown status succeeded")
	}
	if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 0); err != nil {
		t.Errorf("Finish after a refused status: %v", err)
	}
}

// TestSessionAppendDuringFinish: appends racing Finish either land whole or
// fail cleanly (run with -race).
func TestSessionAppendDuringFinish(t *testing.T) {
	m, _, _ := newManager(t)
	s, err := m.Create(t.Context(), session.Info{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if err := s.Append(session.Entry{Type: session.EntrySystem}); err != nil && !errors.Is(err, os.ErrClosed) {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 0); err != nil {
		t.Errorf("Finish: %v", err)
	}
	wg.Wait()
	if _, problems, err := session.ReadTranscript(s.Info.TranscriptPath); err != nil || len(problems) > 0 {
		t.Errorf("transcript after racing appends: err %v, problems %q", err, problems)
	}
}

// TestManagerPrepare: a Prepared session has no record until its caller
// writes it (Recorded); Finish records one never written, with its end, so
// that a failed start still leaves a record; Hold keeps Finish's update for
// the caller to write. (Its transcript: TestManagerPrepareClaim.)
func TestManagerPrepare(t *testing.T) {
	ctx := t.Context()
	m, idx, _ := newManager(t)

	s, err := m.Prepare(session.Info{Agent: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idx.GetSession(ctx, s.Info.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Prepare wrote a record (GetSession err = %v)", err)
	}
	if s.IsRecorded() || s.Info.Status != session.StatusRunning || s.Info.Owner != "" {
		t.Errorf("prepared: recorded %v, info %+v", s.IsRecorded(), s.Info)
	}
	// Never recorded: Finish writes the record, ended.
	if err := s.Finish(ctx, session.StatusFailed, llm.Usage{}, llm.Cost{}, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := idx.GetSession(ctx, s.Info.ID); err != nil || got.Status != session.StatusFailed || got.Agent != "worker" {
		t.Errorf("after Finish of an unrecorded session: %+v, %v", got, err)
	}

	// Recorded by its caller, held: Finish writes nothing, Held does.
	s, err = m.Prepare(session.Info{Agent: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.CreateSession(ctx, s.Info); err != nil {
		t.Fatal(err)
	}
	s.Recorded()
	s.Hold()
	if err := s.Finish(ctx, session.StatusCompleted, llm.Usage{OutputTokens: 7}, llm.USD(0.5), 2); err != nil {
		t.Fatal(err)
	}
	if got, _ := idx.GetSession(ctx, s.Info.ID); got.Status != session.StatusRunning {
		t.Errorf("a held Finish wrote the record: %+v", got)
	}
	end := s.Held()
	if end == nil || s.Held() != nil {
		t.Fatal("Held did not hand over Finish's update exactly once")
	}
	if err := idx.UpdateSession(ctx, s.Info.ID, end); err != nil {
		t.Fatal(err)
	}
	got, _ := idx.GetSession(ctx, s.Info.ID)
	if got.Status != session.StatusCompleted || got.Usage.OutputTokens != 7 || got.NumTurns != 2 || got.CostUSD != llm.USD(0.5) {
		t.Errorf("the held update stored %+v", got)
	}
	if s.Info != got {
		t.Errorf("Info after the held update = %+v, want the stored %+v", s.Info, got)
	}
}

// TestManagerPrepareClaim: a Prepared session holds no transcript until
// Claim creates it, new; an append before that is refused; Claim is
// idempotent; a session that ends without ever being claimed still leaves
// a transcript (empty) and its record.
func TestManagerPrepareClaim(t *testing.T) {
	ctx := t.Context()
	m, idx, dir := newManager(t)

	s, err := m.Prepare(session.Info{Agent: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, s.Info.ID+".jsonl")
	if s.Info.TranscriptPath != path {
		t.Errorf("TranscriptPath = %q, want %q: it is where Claim will create it", s.Info.TranscriptPath, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Prepare made a transcript (stat: %v)", err)
	}
	entry := session.Entry{Type: session.EntryUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hi")}}}
	if err := s.Append(entry); err == nil {
		t.Error("Append before Claim: no error")
	}
	for range 2 {
		if err := s.Claim(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(entry); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, session.StatusCompleted, llm.Usage{}, llm.Cost{}, 1); err != nil {
		t.Fatal(err)
	}
	if entries, _, err := session.ReadTranscript(path); err != nil || len(entries) != 1 {
		t.Errorf("transcript after Claim and one append: %d entries, %v", len(entries), err)
	}
	if err := s.Claim(ctx); err == nil {
		t.Error("Claim after Finish: no error")
	}

	// Never claimed: Finish creates the transcript, empty, and the record.
	s, err = m.Prepare(session.Info{Agent: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, session.StatusKilled, llm.Usage{}, llm.Cost{}, 0); err != nil {
		t.Fatal(err)
	}
	if entries, _, err := session.ReadTranscript(s.Info.TranscriptPath); err != nil || len(entries) != 0 {
		t.Errorf("transcript of a session that never ran: %d entries, %v", len(entries), err)
	}
	if got, err := idx.GetSession(ctx, s.Info.ID); err != nil || got.Status != session.StatusKilled {
		t.Errorf("record of a session that never ran: %+v, %v", got, err)
	}

	// Claim never takes over a transcript already there.
	s, err = m.Prepare(session.Info{ID: "taken"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "taken.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx); err == nil {
		t.Error("Claim opened an existing transcript")
	}
}
