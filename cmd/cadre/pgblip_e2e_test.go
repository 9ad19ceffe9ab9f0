package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

// blipOutage is how long TestPostgresRestartMidRun keeps the server down.
const blipOutage = 5 * time.Second

// TestPostgresRestartMidRun: the PostgreSQL server is stopped (pg_ctl stop
// -m fast, as an operator's restart: every connection ended with 57P01)
// while a `cadre -p` has three background children running, and started
// again 5 s later. The first child's model request takes the server down
// and answers only once it is back up; the other two answer while it is
// down, so their transcript appends and end records meet the outage. The
// run must pause, not fail: exit 0, every child's result delivered to the
// main agent, every task completed and notified, and every transcript
// entry stored.
func TestPostgresRestartMidRun(t *testing.T) {
	// A server of its own: the binary's shared one serves parallel tests.
	var own pgtest.Server
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	url := own.URL(t)

	const children = 3
	down, up := newBGFlag(), newBGFlag()
	var (
		first   atomic.Bool
		outage  atomic.Int64 // how long the server was away, ns
		downErr atomic.Value
	)
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			n := 0
			for i := range children {
				if c.has(fmt.Sprintf("BLIP-CHILD-%d:", i)) {
					n = i
				}
			}
			if first.CompareAndSwap(false, true) {
				// The first child request: take the server down,
				// keep it down for blipOutage, bring it back.
				began := time.Now()
				if err := own.Down(); err != nil {
					downErr.Store(err)
				}
				down.set()
				time.Sleep(time.Until(began.Add(blipOutage))) // the outage itself, not a wait for an event
				if err := own.Up(); err != nil {
					downErr.Store(err)
				}
				outage.Store(int64(time.Since(began)))
				up.set()
			} else if !down.wait() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: the server was never taken down"}
			}
			return testkit.Reply{Text: fmt.Sprintf("CHILD-RESULT-%d", n)}
		case len(c.uses("Agent")) == 0:
			var calls []testkit.ToolCall
			for i := range children {
				calls = append(calls, bgAgentCall(fmt.Sprintf("toolu_blip_%d", i), fmt.Sprintf("part %d", i), fmt.Sprintf("BLIP-CHILD-%d: do part %d", i, i)))
			}
			return testkit.Reply{ToolCalls: calls}
		case len(c.notifications()) == children:
			return testkit.Reply{Text: "MAIN-ANSWER: all three are back."}
		}
		return testkit.Reply{Text: "Waiting for the rest."}
	}))
	e.set("CADRE_STORE_URL=" + url)

	p := e.run("", "-p", "run three parts in the background", "--model", sonnet, "--output-format", "stream-json")
	if err, _ := downErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	if !up.wait() {
		t.Fatal("the server was never brought back up")
	}
	t.Logf("the server was away for %s", time.Duration(outage.Load()).Round(time.Millisecond))
	if p.code != 0 {
		t.Fatalf("cadre -p through a %s restart exited %d; stderr:\n%s", blipOutage, p.code, p.stderr)
	}
	// River logs its own reconnections during the outage; what must not
	// happen is that the node gives River up.
	if strings.Contains(p.stderr, "start River") {
		t.Errorf("the restart stopped the node's River client:\n%s", p.stderr)
	}
	res := finalResult(t, p.stdout)
	sid, _ := res["session_id"].(string)
	if res["result"] != "MAIN-ANSWER: all three are back." || sid == "" {
		t.Fatalf("final result %v; stderr:\n%s", res, p.stderr)
	}

	// Every child's result reached the main agent.
	mainCalls, _ := bgCalls(srv)
	last := mainCalls[len(mainCalls)-1]
	for i := range children {
		if !last.has(fmt.Sprintf("CHILD-RESULT-%d", i)) {
			t.Errorf("the main agent's last request does not carry child %d's result", i)
		}
	}
	ts := cliTasks(t, e)
	if len(ts) != children {
		t.Fatalf("cadre tasks: %d tasks, want %d: %+v", len(ts), children, ts)
	}
	for _, tk := range ts {
		if tk.Status != task.StatusCompleted || !tk.Notified || !strings.HasPrefix(tk.Result, "CHILD-RESULT-") {
			t.Errorf("task %s: status %s, notified %v, result %q; want completed, notified, its child's result", tk.ID, tk.Status, tk.Notified, tk.Result)
		}
		// Nothing of the child's transcript was lost: its prompt and
		// its answer, once each.
		out := ok(t, e.run("", "sessions", "show", tk.ChildSessionID)).stdout
		for _, want := range []string{"BLIP-CHILD-", tk.Result} {
			if n := strings.Count(out, want); n != 1 {
				t.Errorf("child transcript %s shows %q %d times, want once:\n%s", tk.ChildSessionID, want, n, out)
			}
		}
	}
	// The main transcript holds the launch, the three notifications and
	// the last answer, each once.
	show := ok(t, e.run("", "sessions", "show", sid)).stdout
	for _, want := range []string{"run three parts in the background", "MAIN-ANSWER: all three are back.", "CHILD-RESULT-0", "CHILD-RESULT-1", "CHILD-RESULT-2"} {
		if n := strings.Count(show, want); n != 1 {
			t.Errorf("the main transcript shows %q %d times, want once:\n%s", want, n, show)
		}
	}
}
