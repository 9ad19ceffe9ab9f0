package subagent

import (
	"context"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/subagent/stop"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestStopTreeCascades: stopping one run stops the background runs it
// started (which live as long as the group, not as long as their parent),
// and leaves its siblings running; the group's listing keeps launch order
// through all of it.
func TestStopTreeCascades(t *testing.T) {
	h, g, c, lead := leadWithGrandchild(t)
	for range 2 {
		recv(t, g.entered, "a blocked run")
	}
	other := h.launchBG(c, "toolu_2", AgentInput{Description: "other", Prompt: "other"})
	recv(t, g.entered, "the other run")
	gcs, err := h.svc.cfg.Tasks.ListTasks(context.Background(), task.Filter{ParentSessionID: lead})
	if err != nil || len(gcs) != 1 {
		t.Fatalf("grandchild records: %v, %v", gcs, err)
	}
	grandchild := gcs[0].ID

	runs := h.group.Runs()
	type row struct {
		ID, Description string
		Depth           int
		Status          task.Status
	}
	rows := func(rs []Run) []row {
		var out []row
		for _, r := range rs {
			out = append(out, row{r.ID, r.Description, r.Depth, r.Status})
		}
		return out
	}
	want := []row{{lead, "lead", 1, task.StatusRunning}, {grandchild, "grandchild", 2, task.StatusRunning}, {other, "other", 1, task.StatusRunning}}
	if d := gocmp.Diff(want, rows(runs)); d != "" {
		t.Fatalf("runs (-want +got):\n%s", d)
	}

	if _, err := stop.Tree(context.Background(), h.svc, "another-root", lead); err == nil || !strings.Contains(err.Error(), "another session's agents") {
		t.Errorf("StopTree from another tree = %v, want a refusal", err)
	}
	stopped, err := stop.Tree(context.Background(), h.svc, c.RootSessionID, lead)
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff([]string{lead, grandchild}, stopped); d != "" {
		t.Errorf("stopped (-want +got):\n%s", d)
	}
	for _, id := range []string{lead, grandchild} {
		if rec := h.record(id); rec.Status != task.StatusKilled {
			t.Errorf("task %s after the stop: %s, want killed", id, rec.Status)
		}
	}
	if h.svc.live(other) == nil {
		t.Fatal("the sibling was stopped too")
	}
	want[0].Status, want[1].Status = task.StatusKilled, task.StatusKilled
	runs = h.group.Runs()
	if d := gocmp.Diff(want, rows(runs)); d != "" {
		t.Errorf("runs after the stop (-want +got):\n%s", d)
	}
	// That an ended run is kept as its snapshot, not as the run, is
	// runs.TestGroupHasRunning's.
	if runs[0].Ended.IsZero() || !runs[2].Ended.IsZero() {
		t.Errorf("ended times: %v (stopped), %v (running)", runs[0].Ended, runs[2].Ended)
	}
	if _, err := stop.Tree(context.Background(), h.svc, c.RootSessionID, lead); err == nil {
		t.Error("stopping a finished run with no running descendant succeeded")
	}

	stopped, err = stop.All(context.Background(), h.svc, c.RootSessionID)
	if err != nil || !slices.Equal(stopped, []string{other}) {
		t.Fatalf("StopAll = %v, %v; want [%s]", stopped, err, other)
	}
	if rec := h.record(other); rec.Status != task.StatusKilled {
		t.Errorf("other after StopAll: %s", rec.Status)
	}
}

// TestSendMessageQueuesForARunningAgent: the front ends' send is the
// SendMessage tool's: queued for a running agent, an error naming the
// problem otherwise.
func TestSendMessageQueuesForARunningAgent(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done"), nil
	}})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work"})
	recv(t, g.entered, "the run")
	reply, err := h.svc.SendMessage(context.Background(), c, id, "also check the tests")
	if err != nil || !strings.Contains(reply, "queued") {
		t.Fatalf("SendMessage = %q, %v", reply, err)
	}
	if es := h.svc.cfg.Queue.Take(id); len(es) != 1 || es[0].Message.Text() != "also check the tests" {
		t.Errorf("the agent's queue: %+v", es)
	}
	for _, tc := range []struct{ to, msg, want string }{
		{"", "hi", "to is empty"},
		{id, "  ", "message is empty"},
		{"../x", "hi", "invalid agent id"},
	} {
		if _, err := h.svc.SendMessage(context.Background(), c, tc.to, tc.msg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SendMessage(%q, %q) = %v, want %q", tc.to, tc.msg, err, tc.want)
		}
	}
	stop.All(context.Background(), h.svc, c.RootSessionID)
}

// TestSendMessageWithoutGroup: the exported SendMessage, called with a
// Caller that brings no Group, resumes a finished agent in the service's
// own group instead of crashing.
func TestSendMessageWithoutGroup(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work"})
	h.notification(id)
	c.Group = nil
	text, err := h.svc.SendMessage(context.Background(), c, id, "once more")
	if err != nil || !strings.Contains(text, "resumed") {
		t.Fatalf("SendMessage = %q, %v; want the agent resumed", text, err)
	}
	h.notification(id)
}
