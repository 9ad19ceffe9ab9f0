package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/llm"
)

// Manager creates, resumes and finds sessions: it keeps an Index record and
// a transcript in step.
type Manager struct {
	idx   Index
	tr    Transcripts
	now   func() time.Time
	newID func() string
	owner string
	// memory: no transcript files (NewMemoryManager).
	memory bool
}

// NewMemoryManager returns a Manager whose sessions live in memory only: an
// in-memory index and no transcript files (--no-session-persistence).
func NewMemoryManager(now func() time.Time) *Manager {
	m := NewManager(NewMem(), "", now, nil)
	m.memory = true
	return m
}

// SetOwner names the process (a task.Owner id) that runs the sessions this
// Manager creates or opens; it is recorded on them while they run.
func (m *Manager) SetOwner(id string) { m.owner = id }

// NewManager returns a Manager that records sessions in idx and writes
// transcripts to files in dir ($CADRE_HOME/sessions). now and newID are the
// clock and the id source (for session ids and entry UUIDs); nil means
// time.Now and UUID v7 strings.
func NewManager(idx Index, dir string, now func() time.Time, newID func() string) *Manager {
	return NewManagerWith(idx, Files{Dir: dir}, now, newID)
}

// NewManagerWith is NewManager for transcripts kept by tr: a store's, so
// that every machine sharing it reads and resumes the same sessions.
func NewManagerWith(idx Index, tr Transcripts, now func() time.Time, newID func() string) *Manager {
	if now == nil {
		now = time.Now
	}
	if newID == nil {
		newID = ids.New
	}
	return &Manager{idx: idx, tr: tr, now: now, newID: newID}
}

// Index is the Index the Manager records sessions in.
func (m *Manager) Index() Index { return m.idx }

// Transcripts is where the Manager keeps transcripts.
func (m *Manager) Transcripts() Transcripts { return m.tr }

// ReadTranscript reads every entry of info's transcript, wherever the
// Manager keeps it (Transcripts.Read): the one way every reader (a resumed
// run's history, `cadre sessions show`, a task's output, the web view)
// gets a transcript.
func (m *Manager) ReadTranscript(ctx context.Context, info Info) ([]Entry, []string, error) {
	if !m.memory && info.TranscriptPath == "" {
		info.TranscriptPath = m.tr.Locate(info.ID)
	}
	return m.of(info).Read(ctx, info)
}

// ArchiveTranscript moves info's finished transcript out of the way
// (Transcripts.Archive) and returns the TranscriptPath its record holds
// from then on.
func (m *Manager) ArchiveTranscript(ctx context.Context, info Info, at time.Time) (string, error) {
	return m.of(info).Archive(ctx, info, at)
}

// of is the Transcripts that hold info's transcript: a record naming a
// file (written before the store kept transcripts) is read from that file
// whatever the Manager keeps now.
func (m *Manager) of(info Info) Transcripts {
	if _, files := m.tr.(Files); !files && InFile(info.TranscriptPath) {
		return Files{Dir: filepath.Dir(info.TranscriptPath)}
	}
	return m.tr
}

// stamp is the current time as an Index keeps it, so that the Info a
// Session holds equals what GetSession returns.
func (m *Manager) stamp() time.Time { return NormalizeTime(m.now()) }

// Create starts a new session. An empty s.ID gets a fresh id; a given one is
// validated. The session is recorded as running, with its transcript where
// the Manager's Transcripts locate it (created empty), and Created/Updated
// set to now unless given.
func (m *Manager) Create(ctx context.Context, s Info) (*Session, error) {
	s, err := m.fill(s)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if err := m.idx.CreateSession(ctx, s); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if m.memory {
		s.TranscriptPath = ""
		return m.newSession(s, nil), nil
	}
	w, err := m.tr.Create(ctx, s.ID, false)
	if err != nil {
		// Leave no record claiming to run when it never could.
		ferr := m.idx.UpdateSession(ctx, s.ID, func(in *Info) error {
			in.Status, in.Updated = StatusFailed, m.stamp()
			return nil
		})
		return nil, errors.Join(fmt.Errorf("create session %q: %w", s.ID, err), ferr)
	}
	return m.newSession(s, w), nil
}

// Prepare is Create for a caller that writes the session's record itself,
// in one transaction with records of its own (a background child's task),
// and then says so with Recorded: it fills in s as Create does but writes
// nothing to the Index and creates no transcript yet. Claim creates the
// transcript, which must be new, when the session is about to run: a
// background child waiting for a place in the lane costs no file
// descriptor, and its launch no file creation, and until Claim a reader
// finds no transcript (Transcripts.Read's os.ErrNotExist). A session never
// recorded is recorded by Finish, with its final status, so that a start
// that fails before its record was written still leaves one.
func (m *Manager) Prepare(s Info) (*Session, error) {
	s, err := m.fill(s)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	sess := m.newSession(s, nil)
	sess.recorded, sess.later = false, true
	return sess, nil
}

// fill completes a new session's record: its id, times, status, transcript
// path and owner.
func (m *Manager) fill(s Info) (Info, error) {
	if s.ID == "" {
		s.ID = m.newID()
	}
	if err := ValidateID(s.ID); err != nil {
		return Info{}, err
	}
	if s.Created.IsZero() {
		s.Created = m.now()
	}
	if s.Updated.IsZero() {
		s.Updated = s.Created
	}
	s.Created, s.Updated = NormalizeTime(s.Created), NormalizeTime(s.Updated)
	s.Status = StatusRunning
	s.TranscriptPath = m.tr.Locate(s.ID)
	s.Owner = m.owner
	return s, nil
}

// Open resumes session id: it returns the session, ready to append to, and
// the model context rebuilt from its transcript (see Messages). id comes
// from outside and is validated first. Lines of the transcript that could not
// be read are skipped and listed in Session.Problems. The record is marked
// running again.
func (m *Manager) Open(ctx context.Context, id string) (*Session, []llm.Message, error) {
	if err := ValidateID(id); err != nil {
		return nil, nil, fmt.Errorf("resume session: %w", err)
	}
	info, err := m.idx.GetSession(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("resume session: %w", err)
	}
	if info.TranscriptPath == "" {
		info.TranscriptPath = m.tr.Locate(id)
	}
	// The writer's claim comes before the read, so that no other writer
	// can add to the transcript between the context rebuilt here and this
	// run's first entry.
	w, entries, problems, err := m.tr.Resume(ctx, info)
	if errors.Is(err, ErrInUse) {
		// The holder records itself just after its claim: read the record
		// again, so the error can name it when it already has.
		if now, gerr := m.idx.GetSession(ctx, id); gerr == nil {
			info = now
		}
		return nil, nil, inUse(info)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("resume session %q: %w", id, err)
	}
	err = m.idx.UpdateSession(ctx, id, func(in *Info) error {
		in.Status, in.Updated, in.TranscriptPath, in.Owner = StatusRunning, m.stamp(), info.TranscriptPath, m.owner
		info = *in
		return nil
	})
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("resume session: %w", err), w.Close())
	}
	s := m.newSession(info, w)
	s.Problems = problems
	return s, Messages(entries), nil
}

// inUse explains that info's session is being written by another run: by
// which process and since when, as its record says, and what to do.
func inUse(info Info) error {
	who := "another process"
	if pid, _, ok := strings.Cut(info.Owner, "-"); ok && pid != "" && info.Status == StatusRunning {
		who = "process " + pid
		if !info.Updated.IsZero() {
			who += " since " + info.Updated.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	return &inUseError{fmt.Sprintf("session %s is in use by %s; a session takes one run at a time: wait for that run to end, or start a new session instead of resuming this one", info.ID, who)}
}

// inUseError is ErrInUse with the session's own explanation.
type inUseError struct{ msg string }

func (e *inUseError) Error() string { return e.msg }
func (e *inUseError) Unwrap() error { return ErrInUse }

// Latest returns the most recently updated main session (no parent) whose
// working directory is cwd ("" matches any), for --continue: the newest
// that has had a turn, as an interactive session opened and left without
// a message has nothing to continue; the newest of all when none has. It
// returns an error wrapping ErrNotFound when there is none.
func (m *Manager) Latest(ctx context.Context, cwd string) (Info, error) {
	noParent := ""
	list, err := m.idx.ListSessions(ctx, Filter{ParentID: &noParent, Cwd: cwd})
	if err != nil {
		return Info{}, fmt.Errorf("find the latest session in %s: %w", cwd, err)
	}
	if len(list) == 0 {
		return Info{}, fmt.Errorf("no session to continue in %s: %w", cwd, ErrNotFound)
	}
	for _, s := range list {
		if s.NumTurns > 0 {
			return s, nil
		}
	}
	return list[0], nil
}

func (m *Manager) newSession(info Info, w *Writer) *Session {
	sess := &Session{Info: info, id: info.ID, m: m, recorded: true}
	if w != nil {
		sess.w.Store(w)
	}
	return sess
}

// Session is an open session: its index record and its transcript writer.
// Append is safe for concurrent use.
type Session struct {
	// Info is the record as of Create, Open or Finish. Finish updates it, so
	// do not read it concurrently with Finish.
	Info Info
	// Problems lists transcript lines Open had to skip (see ReadTranscript).
	Problems []string

	id string // Info.ID, kept apart so Append never reads Info
	m  *Manager
	// w is the transcript's writer: nil for a session kept in memory,
	// and for a Prepared one (later) until Claim.
	w     atomic.Pointer[Writer]
	later bool

	mu       sync.Mutex
	finished bool
	// recorded is false for a Prepared session until Recorded.
	recorded bool
	// hold makes Finish keep its update of the record in held instead of
	// writing it (Hold).
	hold bool
	held func(*Info) error
	// title is for a record that has none (SetTitle).
	title string
}

// SetTitle gives the session title, when its record has none, at Finish:
// a conversation opened without a prompt is named by its first message.
func (s *Session) SetTitle(title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.title = title
}

// Recorded tells a Prepared session that its record was written.
func (s *Session) Recorded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = true
}

// IsRecorded reports whether the session's record is in the Index (always,
// unless it was Prepared and not yet Recorded).
func (s *Session) IsRecorded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recorded
}

// Hold makes the next Finish close the transcript and keep its update of
// the record for Held instead of writing it: for a caller that writes it in
// one transaction with records of its own (a background child's end and its
// task's). Until that write the Index still says running; a process that
// dies first leaves it to recovery, as it would a run it was in.
func (s *Session) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = true
}

// Held returns the update of the record that Finish kept (nil if Finish has
// not run on a held session), and forgets it. Passed to
// Index.UpdateSession or a store's joint write, it records the end as
// Finish would have, and sets Info to the stored record.
func (s *Session) Held() func(*Info) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn := s.held
	s.held = nil
	return fn
}

// Append writes e to the transcript, filling SessionID, UUID and Timestamp
// if empty (from the Manager's id source and clock).
func (s *Session) Append(e Entry) error {
	e = s.fill(e)
	w := s.w.Load()
	switch {
	case w != nil:
		return w.Append(e)
	case s.later:
		return fmt.Errorf("session %q: its transcript is not created yet (Claim)", s.id)
	}
	return nil // a session kept in memory (NewMemoryManager)
}

// fill gives e what Append fills when empty: the session's id, a new
// UUID, the Manager's time.
func (s *Session) fill(e Entry) Entry {
	if e.SessionID == "" {
		e.SessionID = s.id
	}
	if e.UUID == "" {
		e.UUID = s.m.newID()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = s.m.now()
	}
	return e
}

// AppendAll writes es to the transcript in order, filling each as Append
// does, and returns how many were written (Writer.AppendAll): a store that
// takes lines in batches writes them all in one go, or none.
func (s *Session) AppendAll(es []Entry) (int, error) {
	filled := make([]Entry, len(es))
	for i, e := range es {
		filled[i] = s.fill(e)
	}
	w := s.w.Load()
	switch {
	case w != nil:
		return w.AppendAll(filled)
	case s.later:
		return 0, fmt.Errorf("session %q: its transcript is not created yet (Claim)", s.id)
	}
	return len(es), nil // a session kept in memory (NewMemoryManager)
}

// Claim creates the transcript of a Prepared session, if it has none yet;
// for any other session it does nothing.
func (s *Session) Claim(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return fmt.Errorf("session %q: already finished", s.id)
	}
	return s.claim(ctx)
}

// claim is Claim with s.mu held.
func (s *Session) claim(ctx context.Context) error {
	if !s.later || s.w.Load() != nil {
		return nil
	}
	w, err := s.m.tr.Create(ctx, s.id, true)
	if err != nil {
		return fmt.Errorf("create session %q: %w", s.id, err)
	}
	s.w.Store(w)
	return nil
}

// Finish ends this run of the session: it records status, adds this run's
// usage, cost and turns to the session's totals, and closes the transcript.
// The writer is closed even if the index update fails. Finishing twice is an
// error.
func (s *Session) Finish(ctx context.Context, status Status, usage llm.Usage, cost llm.Cost, turns int) error {
	if !status.Valid() {
		return fmt.Errorf("finish session %q: unknown status %q", s.id, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return fmt.Errorf("finish session %q: already finished", s.id)
	}
	s.finished = true
	// A session that ends before it ever ran still leaves a transcript,
	// empty, for whoever reads or resumes it.
	cerr := s.claim(ctx)

	stamp := s.m.stamp()
	title := s.title
	update := func(in *Info) error {
		if in.Title == "" {
			in.Title = title
		}
		in.Status = status
		in.Usage = in.Usage.Add(usage)
		in.CostUSD = in.CostUSD.Add(cost)
		in.NumTurns += turns
		in.Updated = stamp
		s.Info = *in
		return nil
	}
	var err error
	switch {
	case !s.recorded:
		// Prepared, never recorded: the record is written now, ended.
		info := s.Info
		if err = update(&info); err == nil {
			err = s.m.idx.CreateSession(ctx, info)
		}
		if err != nil {
			err = fmt.Errorf("finish session: %w", err)
		}
		s.recorded = err == nil
	case s.hold:
		s.held = update
	default:
		if err = s.m.idx.UpdateSession(ctx, s.id, update); err != nil {
			err = fmt.Errorf("finish session: %w", err)
		}
	}
	err = errors.Join(cerr, err)
	if w := s.w.Load(); w != nil {
		return errors.Join(err, w.Close())
	}
	return err
}

// Release closes the transcript without ending the session: another
// process (a node that runs a dispatched child) opens it next and writes
// its end. The record is left as it is; Finish after Release is an error.
func (s *Session) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return fmt.Errorf("release session %q: already finished", s.id)
	}
	s.finished = true
	if w := s.w.Load(); w != nil {
		return w.Close()
	}
	return nil
}
