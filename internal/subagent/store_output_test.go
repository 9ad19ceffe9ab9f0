package subagent

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/llm"
)

// TestOutputFromStoreTranscript: with transcripts in a store (PostgreSQL
// mode), a background run writes no output file: its task names none, the
// launch text sends the model to TaskOutput instead of Read, and its
// output, for this process and for another reading its record, is
// rendered from its transcript in the store.
func TestOutputFromStoreTranscript(t *testing.T) {
	h := newHarness(t, setup{
		transcripts: func(t *testing.T) session.Transcripts {
			db, err := postgres.Open(t.Context(), pg.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db.Transcripts("test-node", time.Hour)
		},
		script: func(context.Context, string, *llm.Request) (*llm.Response, error) {
			return reply("CHILD-SAYS-42"), nil
		},
	})
	c := h.mainCaller()
	runs := h.ownGroup(&c)
	res := h.mustCall(c, "toolu_1", AgentInput{Description: "work", Prompt: "PROMPT-MARK", RunInBackground: true})
	text := resultText(res)
	if strings.Contains(text, "Read that file") || !strings.Contains(text, "Call TaskOutput with task_id") {
		t.Errorf("launch text in store mode points to a file, or not to TaskOutput:\n%s", text)
	}
	id := childID(t, res)
	runs.Wait()

	rec := h.record(id)
	if rec.OutputFile != "" {
		t.Errorf("task OutputFile = %q, want none", rec.OutputFile)
	}
	filepath.WalkDir(filepath.Join(h.dir, ".state"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("store mode wrote %s", path)
		}
		return nil
	})
	out, err := h.svc.Output(t.Context(), rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[message] PROMPT-MARK", "CHILD-SAYS-42", "[completed]"} {
		if !strings.Contains(out, want) {
			t.Errorf("Output does not show %q:\n%s", want, out)
		}
	}
	// A process where the run is not live reads its log through the record.
	if got := (finder{h.svc}).Tail(t.Context(), rec, 8000); !strings.Contains(got, "CHILD-SAYS-42") || !strings.Contains(got, "PROMPT-MARK") {
		t.Errorf("tail from the record = %q, want the child's log", got)
	}
}
