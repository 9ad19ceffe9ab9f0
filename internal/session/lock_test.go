//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// A session takes one writer at a time. Each Manager here stands for a
// process: two of them over one index and one sessions directory are two
// cadre processes resuming the same session.
func TestOneWriterPerSession(t *testing.T) {
	idx := session.NewMem()
	dir := filepath.Join(t.TempDir(), "sessions")
	first := session.NewManager(idx, dir, nil, nil)
	first.SetOwner("4242-00000000deadbeef")
	second := session.NewManager(idx, dir, nil, nil)
	second.SetOwner("4343-00000000cafef00d")

	s, err := first.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	id := s.Info.ID
	if err := s.Append(session.Entry{Type: session.EntryUser, Message: ptr(llm.UserText("first"))}); err != nil {
		t.Fatal(err)
	}

	// While the creator writes, nobody else may resume it.
	_, _, err = second.Open(t.Context(), id)
	if !errors.Is(err, session.ErrInUse) {
		t.Fatalf("second writer: err = %v, want ErrInUse", err)
	}
	for _, want := range []string{id, "in use by process 4242 since", "UTC", "wait"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got, _ := idx.GetSession(t.Context(), id); got.Owner != "4242-00000000deadbeef" {
		t.Errorf("the refused writer changed the record: owner %q", got.Owner)
	}

	// Finishing releases the session; then it resumes, once.
	if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 1); err != nil {
		t.Fatal(err)
	}
	s2, msgs, err := second.Open(t.Context(), id)
	if err != nil {
		t.Fatalf("resume after the first writer finished: %v", err)
	}
	if len(msgs) != 1 {
		t.Errorf("resumed %d messages, want 1", len(msgs))
	}
	if _, _, err := first.Open(t.Context(), id); !errors.Is(err, session.ErrInUse) || !strings.Contains(err.Error(), "process 4343") {
		t.Errorf("third writer while the second runs: err = %v, want ErrInUse naming process 4343", err)
	}
	if err := s2.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 1); err != nil {
		t.Fatal(err)
	}
}

// The lock belongs to the open transcript: closing its descriptor, which
// the kernel does for a killed process, frees the session.
func TestWriterLockDiesWithTheDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := session.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.OpenWriter(path); !errors.Is(err, session.ErrInUse) {
		t.Fatalf("second writer on an open transcript: err = %v, want ErrInUse", err)
	}
	w.Close()
	w2, err := session.OpenWriter(path)
	if err != nil {
		t.Fatalf("writer after the first closed: %v", err)
	}
	w2.Close()
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock file was left beside the transcript: %v", err)
	}
}
