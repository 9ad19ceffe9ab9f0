package subagent

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestMovedRunIsABackgroundRun (S-L2, S-C2, S-X2): a foreground run moved
// to the background — by its timeout_seconds running out, or by
// Group.Background (Ctrl+B) — is then a background run in every respect:
// it keeps its record's heartbeat fresh, honours a stop requested through
// its record by another process, and holds a slot of the lane, so that a
// run started in the background while the lane is full waits, pending,
// until it ends.
func TestMovedRunIsABackgroundRun(t *testing.T) {
	one := 1
	for _, tc := range []struct {
		name    string
		timeout *int
		move    func(h *harness)
	}{
		{"timeout_seconds", &one, func(*harness) {}},
		{"Group.Background", nil, func(h *harness) {
			if n := h.group.Background(); n != 1 {
				h.t.Errorf("Background moved %d runs, want 1", n)
			}
		}},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			g := newGate()
			var tick atomic.Int64 // a clock that moves at every reading
			h := newHarness(t, setup{
				subagents: config.Subagents{MaxConcurrent: 1},
				now:       func() time.Time { return fixedNow.Add(time.Duration(tick.Add(1)) * time.Millisecond) },
				script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
					if firstUserText(req) == "slow" {
						if err := g.wait(ctx, req); err != nil {
							return nil, err
						}
					}
					return reply("done: " + firstUserText(req)), nil
				},
			})
			h.svc.cfg.WatchInterval = time.Millisecond
			h.svc.rewire()
			c := h.mainCaller()
			out := make(chan tool.Result, 1)
			go func() {
				res, err := h.call(context.Background(), c, "toolu_fg", AgentInput{Description: "slow one", Prompt: "slow", TimeoutSeconds: tc.timeout})
				if err != nil {
					res = tool.Errorf("%v", err)
				}
				out <- res
			}()
			recv(t, g.entered, "the child's model call")
			tc.move(h)
			res := recv(t, out, "the foreground call to let go")
			if st := metaOf(t, res)["status"]; st != "async_launched" {
				t.Fatalf("the call returned %v, want async_launched: %s", st, resultText(res))
			}
			id := childID(t, res)
			lt := h.running(id)

			// Heartbeat: the record is kept fresh while the run goes on.
			first := h.record(id).Heartbeat
			eventually(t, "the moved run's heartbeat to advance", func() bool { return h.record(id).Heartbeat.After(first) })

			// Lane: with maxConcurrent 1 the moved run holds the only slot.
			queued := h.launchBG(c, "toolu_bg", AgentInput{Description: "queued one", Prompt: "quick"})
			// Two heartbeats later the queued run has had ample time to
			// start, had it a slot.
			for range 2 {
				beat := h.record(id).Heartbeat
				eventually(t, "a heartbeat", func() bool { return h.record(id).Heartbeat.After(beat) })
			}
			if st := h.record(queued).Status; st != task.StatusPending {
				t.Errorf("a background run started while the moved run holds the lane is %s, want pending", st)
			}
			if n := len(h.requestsOf("general-purpose")); n != 1 {
				t.Errorf("%d child model calls, want only the moved run's: the queued run started", n)
			}

			// Stop through the record, as `cadre tasks stop` in another
			// process asks it.
			if _, err := h.svc.cfg.Tasks.UpdateTask(context.Background(), id, func(rec *task.Task) error {
				rec.CancelRequested = true
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			ended(t, lt)
			if st := h.record(id).Status; st != task.StatusKilled {
				t.Errorf("the moved run ended %s after a stop request, want killed", st)
			}
			notes := h.awaitEntries("", 2)
			var killed, done bool
			for _, n := range notes {
				text := n.Message.Text()
				killed = killed || n.TaskID == id && strings.Contains(text, "<status>killed</status>")
				done = done || n.TaskID == queued && strings.Contains(text, "done: quick")
			}
			if !killed || !done {
				t.Errorf("notifications: killed moved run %v, finished queued run %v; want both", killed, done)
			}
		}))
	}
}

// TestOutputFileOnlyForBackgroundRuns: a foreground run's output goes to
// its caller, so it creates no output file (a spawn's costliest step on a
// slow disk after its transcript); moved to the background, it gets one
// that starts with everything it did before the move, and a reader sees
// its output so far either way.
func TestOutputFileOnlyForBackgroundRuns(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: partialThenBlock(g)})
	c := h.mainCaller()
	files := func() []string {
		entries, _ := os.ReadDir(h.svc.cfg.OutputDir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	out := make(chan tool.Result, 1)
	go func() {
		res, err := h.call(context.Background(), c, "toolu_fg", AgentInput{Description: "slow one", Prompt: "slow"})
		if err != nil {
			res = tool.Errorf("%v", err)
		}
		out <- res
	}()
	recv(t, g.entered, "the child's second model call")
	if f := files(); len(f) != 0 {
		t.Errorf("a foreground run created output files %v", f)
	}
	runs := h.svc.treeRuns(c.RootSessionID)
	if len(runs) != 1 {
		t.Fatalf("%d runs in the tree, want 1", len(runs))
	}
	if so := runs[0].OutputTail(8000); !strings.Contains(so, "partial findings") || !strings.Contains(so, "→ Read") {
		t.Errorf("a foreground run's output so far = %q", so)
	}
	if n := h.group.Background(); n != 1 {
		t.Fatalf("Background moved %d runs, want 1", n)
	}
	res := recv(t, out, "the foreground call to let go")
	id := childID(t, res)
	file, err := os.ReadFile(h.record(id).OutputFile)
	if err != nil {
		t.Fatalf("the moved run has no output file: %v", err)
	}
	for _, want := range []string{"partial findings\n", "→ Read", "← "} {
		if !strings.Contains(string(file), want) {
			t.Errorf("the moved run's output file lacks %q, written before the move:\n%s", want, file)
		}
	}
	close(g.release)
	eventually(t, "the moved run to end", func() bool { return h.record(id).Status.Terminal() })
	if file, _ = os.ReadFile(h.record(id).OutputFile); !strings.Contains(string(file), "[completed]") {
		t.Errorf("the output file does not end with the run's end:\n%s", file)
	}
}
