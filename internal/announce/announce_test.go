package announce

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// conv answers the announce turn with reply, recording what it was asked.
type conv struct {
	reply string
	asked []string
}

func (c *conv) Turn(_ context.Context, input ...llm.Message) *runner.Result {
	c.asked = append(c.asked, input[0].Text())
	return &runner.Result{Outcome: &loop.Outcome{Result: c.reply, Usage: llm.Usage{InputTokens: 1500, OutputTokens: 20}}, Cost: llm.USD(0.5)}
}

// TestAnnounce (S-N2): a completed run is asked for its report once, the
// turn's usage and cost join the run's, and the announcement carries the
// runtime's status, the report, the notes and a stats line; a failed run
// is not asked; ANNOUNCE_SKIP posts nothing.
func TestAnnounce(t *testing.T) {
	ctx := t.Context()
	sess := Session{Key: "agent:a:subagent:1", ID: "s1", TranscriptPath: "/t/s1.jsonl"}
	runtime := func() time.Duration { return 61 * time.Second }

	c := &conv{reply: " found 3 bugs "}
	res := &runner.Result{Outcome: &loop.Outcome{Usage: llm.Usage{InputTokens: 1_000_000, OutputTokens: 500}}, Cost: llm.USD(1)}
	text, skip := Announce(ctx, c, res, task.StatusCompleted, runtime, sess)
	if skip || len(c.asked) != 1 || c.asked[0] != Directive() {
		t.Fatalf("skip %v, asked %q", skip, c.asked)
	}
	want := "Status: success\nResult: found 3 bugs\nNotes: none\nruntime 1m1s · tokens 1.0M in / 520 out / 1.0M total · est. cost " + llm.USD(1.5).String() +
		" · session key agent:a:subagent:1 · session id s1 · transcript /t/s1.jsonl"
	if text != want {
		t.Errorf("announcement:\n%s\nwant:\n%s", text, want)
	}

	failed := &conv{reply: "ignored"}
	res = &runner.Result{Outcome: &loop.Outcome{Err: errors.New("boom")}}
	text, _ = Announce(ctx, failed, res, task.StatusFailed, runtime, sess)
	if len(failed.asked) != 0 || !strings.HasPrefix(text, "Status: error\nResult: (not available)\nNotes: boom\n") {
		t.Errorf("a failed run: asked %q, announced:\n%s", failed.asked, text)
	}

	if _, skip := Announce(ctx, &conv{reply: Skip}, &runner.Result{Outcome: &loop.Outcome{}}, task.StatusCompleted, runtime, sess); !skip {
		t.Error("ANNOUNCE_SKIP was announced")
	}
}
