package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// TestReadTranscriptProblemsQuoteOnlyAnExcerpt: the JSON decoder's errors
// quote a bad timestamp or number whole, and a problem line repeated
// them; a transcript holds whatever the session read, so a problem says
// what was wrong with an excerpt only.
func TestReadTranscriptProblemsQuoteOnlyAnExcerpt(t *testing.T) {
	long := strings.Repeat("x", 300)
	lines := []string{
		`{"type":"user","timestamp":"` + long + `"}`,
		`{"type":"user","usage":{"input_tokens":1` + strings.Repeat("0", 300) + `}}`,
		`{"type":"user","timestamp":"` + long, // half-written
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	content := strings.Join(lines, "\n")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, problems, err := session.ReadTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != len(lines) {
		t.Fatalf("problems = %q, want %d", problems, len(lines))
	}
	for i, p := range problems {
		if want := path + ":" + string(rune('1'+i)) + ": "; !strings.HasPrefix(p, want) {
			t.Errorf("problem %q does not start with %q", p, want)
		}
		fuzzcheck.NoEcho(t, "problem", content, p)
	}
}
