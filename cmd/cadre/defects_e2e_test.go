package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// Correctness defects of issue 8, through the real binary.

// A foreground child moved to the background by its timeout_seconds is a
// background run like any other: `cadre tasks stop` from another process
// stops it, and the main agent is told it was stopped.
func TestMovedRunStoppedFromAnotherProcess(t *testing.T) {
	const useID = "toolu_moved"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: it was stopped."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: useID, Name: "Agent", Input: map[string]any{
				"description": "slow job", "prompt": "MOVED-MARKER: take forever", "subagent_type": "general-purpose", "timeout_seconds": 1,
			}}}}
		}
		return testkit.Reply{Text: "It went on in the background; waiting."}
	}))
	r := e.start("-p", "start a slow job", "--model", sonnet, "--output-format", "stream-json")
	var id string
	bgEventually(t, "the main agent's request after the move", func() bool {
		mains, _ := bgCalls(srv)
		if len(mains) < 2 {
			return false
		}
		id = mains[1].launchedID()
		return id != ""
	})
	if rec := cliTask(t, e, id); rec.Status != task.StatusRunning || rec.Heartbeat.IsZero() {
		t.Errorf("the moved run's record: status %s, heartbeat %v; want running with a heartbeat", rec.Status, rec.Heartbeat)
	}
	ok(t, e.run("", "tasks", "stop", id))
	p := r.wait(t, 30*time.Second)
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	ns := last.notifications()
	if len(ns) != 1 {
		t.Fatalf("%d notifications, want 1:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, useID, "killed", "was stopped")
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: it was stopped." {
		t.Errorf("final result %v", res)
	}
	if rec := cliTask(t, e, id); rec.Status != task.StatusKilled || !strings.Contains(rec.Error, "stopped") {
		t.Errorf("task after the stop: status %s, error %q; want killed, saying it was stopped", rec.Status, rec.Error)
	}
}
