package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/record"
)

// Entry types.
const (
	EntryUser      = "user"
	EntryAssistant = "assistant"
	EntrySystem    = "system"
	EntrySummary   = "summary"
)

// Entry is one line of a transcript: the SDK's record.TranscriptEntry,
// the same type. Its own JSON is the API's; the transcript's line format,
// Claude Code's, is EncodeEntry's and DecodeEntry's.
type Entry = record.TranscriptEntry

// Writer appends entries to a transcript. It is safe for concurrent use;
// each entry is encoded whole, as one line, and handed to its sink in one
// call. A transcript file's sink is the file itself (OpenWriter); a store
// keeping transcripts elsewhere passes its own (NewWriter).
type Writer struct {
	path string

	mu     sync.Mutex
	sink   LineSink
	last   string // UUID of the last entry in the transcript, "" if none is known
	closed bool
}

// LineSink is where a Writer's lines go: one call per entry, the line
// ending in '\n'. AppendLine must not return before the line is as safe as
// the store promises (for a file, in the kernel's hands; for a database,
// committed). Calls never overlap: the Writer serialises them.
type LineSink interface {
	AppendLine(line []byte) error
	Close() error
}

// LinesSink is a LineSink that can take several lines in one call, all or
// none: a store for which each call is a round trip (a database) writes a
// batch in one. AppendLines must not return before every line is as safe
// as AppendLine's, and on an error none of them may have been kept.
type LinesSink interface {
	LineSink
	AppendLines(lines [][]byte) error
}

// NewWriter returns a Writer whose lines go to sink, continuing a
// transcript whose last entry's UUID is last ("" for a new one). path names
// the transcript in errors (Path).
func NewWriter(path string, sink LineSink, last string) *Writer {
	return &Writer{path: path, sink: sink, last: last}
}

// fileSink is a transcript file opened with O_APPEND.
type fileSink struct{ f *os.File }

// AppendLine writes line in one Write call: with O_APPEND the kernel places
// the whole line at the end of the file, so it is never interleaved and,
// once Write returns, survives the process being killed.
func (s fileSink) AppendLine(line []byte) error {
	_, err := s.f.Write(line)
	return err
}

func (s fileSink) Close() error { return s.f.Close() }

// ErrInUse is wrapped by the error of OpenWriter (and Manager.Open) when
// another writer, in this process or another, holds the transcript.
var ErrInUse = errors.New("session is in use by another writer")

// OpenWriter opens the transcript at path for appending, creating it and its
// directories if needed (private to the user: transcripts hold whatever the
// session read). An existing transcript is continued: its last entry's UUID
// becomes the parent of the next entry, and a partial last line (the process
// was killed mid-write) is terminated first so the next entry starts clean.
//
// A transcript has one writer at a time: while a Writer is open, another
// OpenWriter of the same file fails with an error wrapping ErrInUse, so two
// runs never interleave their branches in one file. The claim ends with
// Close or with the process (on systems with flock; see lockWriter).
func OpenWriter(path string) (*Writer, error) {
	f, err := claim(path)
	if err != nil {
		return nil, err
	}
	return newWriter(f, path)
}

// createWriter creates the transcript at path, which must not exist yet,
// and takes its writer's lock: a new session's, whose record is written
// after it (Manager.Prepare), so that an id already used can never append
// to another session's transcript.
func createWriter(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	if err := lockWriter(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("create transcript %s: %w", path, err)
	}
	return NewWriter(path, fileSink{f}, ""), nil
}

// claim opens the transcript at path for appending, creating it if needed,
// and takes its writer's lock.
func claim(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	if err := lockWriter(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	return f, nil
}

// newWriter continues the claimed transcript f; it closes f on failure.
func newWriter(f *os.File, path string) (*Writer, error) {
	last, partial, err := scanTail(f)
	if err == nil && partial {
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	return NewWriter(path, fileSink{f}, last), nil
}

// Path is the transcript's path (its location, for one not in a file).
func (w *Writer) Path() string { return w.path }

// Append writes e as one line. An empty UUID gets a fresh one, a zero
// Timestamp the current time, and an empty ParentUUID the UUID of the entry
// written before it.
func (w *Writer) Append(e Entry) error {
	if e.UUID == "" {
		e.UUID = ids.New()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now().UTC()
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("append to transcript %s: %w", w.path, os.ErrClosed)
	}
	if e.ParentUUID == "" {
		e.ParentUUID = w.last
	}
	line, err := EncodeEntry(e)
	if err != nil {
		return fmt.Errorf("append to transcript %s: %w", w.path, err)
	}
	if err := w.sink.AppendLine(line); err != nil {
		return fmt.Errorf("append to transcript %s: %w", w.path, err)
	}
	w.last = e.UUID
	return nil
}

// AppendAll writes es in order, as Append writes each, and returns how
// many were written: all of them, or those before the one that failed.
// A sink that takes lines in batches (LinesSink) gets them in one call,
// which keeps all or none, so a transcript in a database pays one round
// trip for them rather than one each.
func (w *Writer) AppendAll(es []Entry) (int, error) {
	lines := make([][]byte, 0, len(es))
	ls, batch := w.sink.(LinesSink)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, fmt.Errorf("append to transcript %s: %w", w.path, os.ErrClosed)
	}
	last := w.last
	for i := range es {
		e := es[i]
		if e.UUID == "" {
			e.UUID = ids.New()
		}
		if e.Timestamp.IsZero() {
			e.Timestamp = time.Now().UTC()
		}
		if e.ParentUUID == "" {
			e.ParentUUID = last
		}
		line, err := EncodeEntry(e)
		if err != nil {
			if batch {
				return 0, fmt.Errorf("append to transcript %s: %w", w.path, err)
			}
			return i, fmt.Errorf("append to transcript %s: %w", w.path, err)
		}
		if !batch {
			if err := w.sink.AppendLine(line); err != nil {
				return i, fmt.Errorf("append to transcript %s: %w", w.path, err)
			}
			w.last = e.UUID
		}
		lines, last = append(lines, line), e.UUID
	}
	if !batch || len(lines) == 0 {
		return len(es), nil
	}
	if err := ls.AppendLines(lines); err != nil {
		return 0, fmt.Errorf("append to transcript %s: %w", w.path, err)
	}
	w.last = last
	return len(es), nil
}

// Close closes the transcript, ending the writer's claim. Closing twice is
// harmless; appending after Close is an error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.sink.Close(); err != nil {
		return fmt.Errorf("close transcript %s: %w", w.path, err)
	}
	return nil
}

// scanTail looks at the end of a transcript without reading all of it: it
// reports whether the file ends in a partial line and the UUID of the last
// complete line ("" if there is none or it cannot be parsed, in which case
// the next entry simply starts a new parent chain).
func scanTail(f *os.File) (last string, partial bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	size := st.Size()
	if size == 0 {
		return "", false, nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return "", false, err
	}
	partial = b[0] != '\n'

	end := size - 1 // the newline ending the last complete line
	if partial {
		if end, err = lastNewline(f, size); err != nil || end < 0 {
			return "", partial, err
		}
	}
	start, err := lastNewline(f, end)
	if err != nil {
		return "", partial, err
	}
	line := make([]byte, end-(start+1))
	if _, err := f.ReadAt(line, start+1); err != nil {
		return "", partial, err
	}
	return LastUUID(line), partial, nil
}

// lastNewline returns the offset of the last '\n' before offset before, or
// -1 if there is none.
func lastNewline(f *os.File, before int64) (int64, error) {
	buf := make([]byte, 32<<10)
	for before > 0 {
		n := min(int64(len(buf)), before)
		off := before - n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i), nil
		}
		before = off
	}
	return -1, nil
}

// ReadTranscript reads every entry of the transcript at path. It is
// tolerant: a malformed or truncated line is skipped and described in
// problems ("path:line: …"), never fatal. err is set only when the file
// cannot be read at all (or a read fails midway; the entries before it are
// still returned).
func ReadTranscript(path string) (entries []Entry, problems []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()

	// bufio.Reader rather than Scanner: a line holding a large tool result
	// has no upper bound.
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return entries, problems, fmt.Errorf("read transcript %s: line %d: %w", path, n, rerr)
		}
		terminated := rerr == nil
		entries, problems = decodeLine(entries, problems, path, n, line, terminated)
		if !terminated {
			return entries, problems, nil
		}
	}
}

// DecodeLines decodes the lines of a transcript a store keeps whole (each
// one an entry, terminated or not), as tolerantly as ReadTranscript: a
// line that is no entry is skipped and described in problems
// ("where:line: …"), line numbers counting from 1.
func DecodeLines(where string, lines [][]byte) (entries []Entry, problems []string) {
	for i, line := range lines {
		entries, problems = decodeLine(entries, problems, where, i+1, line, true)
	}
	return entries, problems
}

// decodeLine appends line n of the transcript at path to entries, or what
// is wrong with it to problems. An unterminated line is the last of a file
// whose writer was killed mid-write.
func decodeLine(entries []Entry, problems []string, path string, n int, line []byte, terminated bool) ([]Entry, []string) {
	text := bytes.TrimSpace(line)
	if len(text) == 0 {
		return entries, problems
	}
	// The decoder's errors may quote a bad value whole (a timestamp, a
	// number): the problem keeps an excerpt.
	switch e, err := DecodeEntry(text); {
	case err != nil && !terminated:
		problems = append(problems, fmt.Sprintf("%s:%d: truncated entry skipped (no newline at the end; the writer was probably killed mid-write): %s", path, n, excerpt.Message(err.Error())))
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s:%d: malformed entry skipped: %s", path, n, excerpt.Message(err.Error())))
	case e.Type == "":
		problems = append(problems, fmt.Sprintf("%s:%d: entry without a \"type\" skipped", path, n))
	default:
		entries = append(entries, e)
	}
	return entries, problems
}

// LastUUID is the UUID of the entry on line, "" if it cannot be read: the
// parent of the entry a continuing Writer appends next (NewWriter).
func LastUUID(line []byte) string {
	var head struct {
		UUID string `json:"uuid"`
	}
	if json.Unmarshal(line, &head) != nil {
		return ""
	}
	return head.UUID
}
