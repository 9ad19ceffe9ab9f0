package subagent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestPendingRunHoldsNoFiles: a background run waiting for a lane place
// has its records but no transcript and no output file; TaskOutput shows
// it empty. It gets both, one file under two names, when it starts; one
// stopped while it waited ends with an empty transcript and its status.
func TestPendingRunHoldsNoFiles(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{sqlite: true, subagents: config.Subagents{MaxConcurrent: 1}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done " + firstUserText(req)), nil
	}})
	ctx := t.Context()
	c := h.mainCaller()
	const queued = "waits for a free place"
	if text := resultText(h.mustCall(c, "toolu_1", AgentInput{Description: "holds the lane", Prompt: "a", RunInBackground: true})); strings.Contains(text, queued) {
		t.Errorf("the launch of a run that started at once says it waits:\n%s", text)
	}
	recv(t, g.entered, "the first child")
	res := h.mustCall(c, "toolu_2", AgentInput{Description: "waits", Prompt: "b", RunInBackground: true})
	if text := resultText(res); !strings.Contains(text, queued) || !strings.Contains(text, "from when it starts") {
		t.Errorf("the launch of a queued run does not say it waits:\n%s", text)
	}
	pending := childID(t, res)
	stopped := h.launchBG(c, "toolu_3", AgentInput{Description: "waits, then is stopped", Prompt: "c"})
	files := func(id string) (transcript, output string) {
		info, err := h.svc.cfg.Index.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.TranscriptPath, h.record(id).OutputFile
	}
	// What front ends list (Group.Runs): waiting, not running.
	listed := func(id string) task.Status {
		for _, r := range c.Group.Runs() {
			if r.ID == id {
				return r.Status
			}
		}
		return ""
	}
	for _, id := range []string{pending, stopped} {
		if st := h.record(id).Status; st != task.StatusPending {
			t.Fatalf("task %s is %s, want pending", id, st)
		}
		if st := listed(id); st != task.StatusPending {
			t.Errorf("Group.Runs lists the waiting run %s as %s, want pending", id, st)
		}
		tr, out := files(id)
		for _, p := range []string{tr, out} {
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("pending task %s: %s exists (stat: %v)", id, p, err)
			}
		}
		if got, err := h.svc.Output(ctx, h.record(id)); err != nil || got != "" {
			t.Errorf("Output of pending task %s = %q, %v; want empty", id, got, err)
		}
	}
	if res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: stopped}); res.IsError {
		t.Fatalf("TaskStop: %s", resultText(res))
	}
	send(t, g.release, struct{}{}, "the first child's release")
	recv(t, g.entered, "the pending child, started")
	if st := listed(pending); st != task.StatusRunning {
		t.Errorf("Group.Runs lists the started run as %s, want running", st)
	}
	tr, out := files(pending)
	a, aerr := os.Stat(tr)
	b, berr := os.Stat(out)
	if aerr != nil || berr != nil || !os.SameFile(a, b) {
		t.Errorf("started task: transcript %v, output file %v, same file %v; want one file under both names", aerr, berr, aerr == nil && berr == nil && os.SameFile(a, b))
	}
	send(t, g.release, struct{}{}, "the second child's release")
	h.awaitEntries("", 3)
	if got, err := h.svc.Output(ctx, h.record(pending)); err != nil || !strings.Contains(got, "done b") || !strings.Contains(got, "[completed]") {
		t.Errorf("Output of the finished task = %q, %v", got, err)
	}
	tr, _ = files(stopped)
	if entries, _, err := session.ReadTranscript(tr); err != nil || len(entries) != 0 {
		t.Errorf("transcript of the stopped task: %d entries, %v; want an empty one", len(entries), err)
	}
	rec := h.record(stopped)
	if got, err := h.svc.Output(ctx, rec); rec.Status != task.StatusKilled || err != nil || !strings.Contains(got, "[killed]") {
		t.Errorf("stopped task: status %s, Output %q, %v", rec.Status, got, err)
	}
}
