package session_test

import (
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
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
