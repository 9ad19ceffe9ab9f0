package shelltask

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// A background shell's output file holds at most a set number of bytes
// (backgroundShell.maxOutputBytes): a dev server left running for a day
// must not fill the disk. When a write would pass the bound, the oldest
// bytes go and a note at the top of the file says how many went. The file
// is replaced whole (a new file renamed over it), so a reader sees the old
// file or the new one, never a half-written one.

// DefaultMaxOutputBytes bounds a background shell's output file when
// the settings do not (backgroundShell.maxOutputBytes).
const DefaultMaxOutputBytes = 8 << 20

// minOutputBytes is the least bound that leaves room for output
// beside the note.
const minOutputBytes = 1 << 10

// droppedNote starts a file whose oldest bytes were dropped.
const droppedNotePrefix = "[cadre: "

func droppedNote(dropped, bound int64) string {
	return fmt.Sprintf("%s%d earlier bytes of output were dropped to keep this file under %d bytes (backgroundShell.maxOutputBytes)]\n", droppedNotePrefix, dropped, bound)
}

// Output is the writer of a background shell's output file. It is
// safe for concurrent use; exec writes from one goroutine.
type Output struct {
	path  string
	bound int64

	mu      sync.Mutex
	f       *os.File
	head    int64 // length of the note at the top, 0 without one
	size    int64 // bytes in the file, the note included
	dropped int64
	err     error // the first write failure, kept: later writes fail too
}

// OpenOutput creates the output file at path (0600, its directory
// 0700), empty.
func OpenOutput(path string, bound int64) (*Output, error) {
	if bound < minOutputBytes {
		bound = minOutputBytes
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("shell output file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shell output file: %w", err)
	}
	return &Output{path: path, bound: bound, f: f}, nil
}

// Write appends p, dropping the oldest output when the file would pass
// its bound. It never returns a short count without an error.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return 0, o.err
	}
	if o.size+int64(len(p)) <= o.bound {
		n, err := o.f.Write(p)
		o.size += int64(n)
		if err != nil {
			o.err = fmt.Errorf("shell output file: %w", err)
			return n, o.err
		}
		return n, nil
	}
	if err := o.compact(p); err != nil {
		o.err = fmt.Errorf("shell output file: %w", err)
		return 0, o.err
	}
	return len(p), nil
}

// compact replaces the file with its newest output and p, cut to three
// quarters of the bound (so the next compaction is a quarter of the bound
// of output away), under a note counting everything dropped. o.mu is held.
func (o *Output) compact(p []byte) error {
	body, err := os.ReadFile(o.path)
	if err != nil {
		return err
	}
	body = append(body[min(o.head, int64(len(body))):], p...)
	// The note's length depends on the count it carries; leave room for
	// its longest form.
	keep := o.bound*3/4 - int64(len(droppedNote(o.dropped+int64(len(body)), o.bound)))
	cut := int64(len(body)) - keep
	if cut < 0 {
		cut = 0
	}
	// Start on a line when one starts near the cut, else on a character.
	rest := body[cut:]
	if i := strings.IndexByte(string(rest[:min(len(rest), 512)]), '\n'); i >= 0 && i+1 < len(rest) {
		rest = rest[i+1:]
	}
	for len(rest) > 0 && !utf8.RuneStart(rest[0]) {
		rest = rest[1:]
	}
	o.dropped += int64(len(body) - len(rest))
	note := droppedNote(o.dropped, o.bound)

	tmp, err := os.CreateTemp(filepath.Dir(o.path), filepath.Base(o.path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(note)
	if werr == nil {
		_, werr = tmp.Write(rest)
	}
	if werr == nil {
		werr = tmp.Chmod(0o600)
	}
	if werr != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return werr
	}
	if err := os.Rename(tmp.Name(), o.path); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	o.f.Close()
	o.f = tmp // the renamed file: still open, and at its end
	o.head, o.size = int64(len(note)), int64(len(note)+len(rest))
	return nil
}

// Close closes the file.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Close()
}

// RawTail is the last n bytes of the file at path, as written (a shell's
// output is not a transcript to render), starting on a whole character,
// with "…" where it was cut; "" when it cannot be read.
func RawTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-int64(n), 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return ""
	}
	if off == 0 {
		return string(b)
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return "…" + string(b)
}

// Text is a shell task's output file as text for a reader: its last
// n bytes, only the lines filter matches when it is set. A file not made
// yet reads as empty.
func Text(path string, n int, filter *regexp.Regexp) (string, error) {
	if filter == nil {
		if _, err := os.Stat(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return RawTail(path, n), nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var kept []string
	for line := range strings.Lines(string(b)) {
		if filter.MatchString(strings.TrimRight(line, "\n")) {
			kept = append(kept, line)
		}
	}
	return newest(strings.Join(kept, ""), n), nil
}

// newest is the last n bytes of s, with "…" where it was cut.
func newest(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
