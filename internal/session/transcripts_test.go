package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
	"github.com/cadre-dev/cadre/llm"
)

// TestFilesConformance: transcript files pass the suite every store's
// transcripts pass. Their writer dying with its process is the kernel's
// part (TestWriterLockDiesWithTheDescriptor).
func TestFilesConformance(t *testing.T) {
	sessiontest.RunTranscripts(t, func(t *testing.T) sessiontest.Nodes {
		dir := filepath.Join(t.TempDir(), "sessions")
		return sessiontest.Nodes{Node: func() session.Transcripts { return session.Files{Dir: dir} }}
	})
}

// elsewhere is a store's transcripts that holds none of the files'.
type elsewhere struct{ session.Files }

func (elsewhere) Read(context.Context, session.Info) ([]session.Entry, []string, error) {
	return nil, nil, errors.New("not kept here")
}

// TestFileTranscriptReadWhateverTheStore: a session recorded with a
// transcript file (before the store kept transcripts) is still read, and
// archived, from its file by a Manager whose transcripts are elsewhere.
func TestFileTranscriptReadWhateverTheStore(t *testing.T) {
	idx := session.NewMem()
	files := session.NewManager(idx, filepath.Join(t.TempDir(), "sessions"), nil, nil)
	s, err := files.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(session.Entry{Type: session.EntryUser, Message: ptr(llm.UserText("kept in a file"))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 1); err != nil {
		t.Fatal(err)
	}

	store := session.NewManagerWith(idx, elsewhere{}, nil, nil)
	got, _, err := store.ReadTranscript(t.Context(), s.Info)
	if err != nil || len(got) != 1 || got[0].Message.Text() != "kept in a file" {
		t.Fatalf("ReadTranscript = %v, %v; want the file's entry", got, err)
	}
	to, err := store.ArchiveTranscript(t.Context(), s.Info, time.Now())
	if err != nil || !session.Archived(to) {
		t.Fatalf("ArchiveTranscript = %q, %v; want the file archived", to, err)
	}
	if _, err := os.Stat(to); err != nil {
		t.Errorf("the archived file: %v", err)
	}
}
