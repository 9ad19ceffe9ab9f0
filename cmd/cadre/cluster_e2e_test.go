package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// node is a second cadre home on the same project, store and model
// server: another machine, as far as cadre can tell.
func (e *env) node(settings string) *env {
	e.t.Helper()
	n := *e
	n.home = e.t.TempDir()
	n.vars = slices.Clone(e.vars)
	for i, v := range n.vars {
		if strings.HasPrefix(v, "CADRE_HOME=") {
			n.vars[i] = "CADRE_HOME=" + n.home
		}
	}
	if err := os.WriteFile(filepath.Join(n.home, "settings.json"), []byte(settings), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return &n
}

// gate holds the children's model calls until opened.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// waitTasks polls the store through `cadre tasks --json` until ok says
// the tasks are as wanted, or fails after d.
func waitTasks(t *testing.T, e *env, d time.Duration, what string, ok func([]task.Task) bool) []task.Task {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ts := cliTasks(t, e)
		if ok(ts) {
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, tasks are not %s: %+v", d, what, ts)
		}
		time.Sleep(100 * time.Millisecond) // between two whole processes; each run is itself the wait
	}
}

// byOwner counts tasks by owner, in a sorted list of counts.
func byOwner(ts []task.Task, status task.Status) []int {
	n := map[string]int{}
	for _, t := range ts {
		if t.Status == status {
			n[t.Owner]++
		}
	}
	var out []int
	for _, c := range n {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// clusterModel: the main agent starts three background children and
// answers once all three have reported; each child waits at the gate.
func clusterModel(g *gate, children chan<- struct{}) testkit.Handler {
	return bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			children <- struct{}{}
			<-g.ch
			return testkit.Reply{Text: "CHILD-DONE"}
		case len(c.notifications()) >= 3:
			return testkit.Reply{Text: fmt.Sprintf("MAIN-ANSWER: %d reports", len(c.notifications()))}
		case len(c.uses("Agent")) == 0:
			var calls []testkit.ToolCall
			for i := range 3 {
				calls = append(calls, bgAgentCall(fmt.Sprintf("toolu_c%d", i), fmt.Sprintf("part %d", i), fmt.Sprintf("BG-MARKER: part %d", i)))
			}
			return testkit.Reply{ToolCalls: calls}
		}
		return testkit.Reply{Text: "Waiting for the reports."}
	})
}

// twoNodes starts two `cadre serve` nodes on one fresh PostgreSQL store,
// node 1 with a lane of one place and node 2 with two (extra is more of
// their settings), starts a run on node 1 whose main agent launches three
// background children, and returns once all three wait at the gate, which
// opens when the test ends (before the fake server closes).
func twoNodes(t *testing.T, extra string) (g *gate, n1, n2 *env, s1 *served, runID string) {
	t.Helper()
	g = &gate{ch: make(chan struct{})}
	children := make(chan struct{}, 8)
	e, _ := anthropicEnv(t, clusterModel(g, children))
	t.Cleanup(g.open)
	e.set("CADRE_STORE_URL=" + pg.URL(t))
	n1 = e.node(`{"subagents": {"maxConcurrent": 1}` + extra + `}`)
	n2 = e.node(`{"subagents": {"maxConcurrent": 2}` + extra + `}`)
	s1, _ = n1.serve("--model", sonnet), n2.serve("--model", sonnet)
	var run struct{ ID string }
	if st := s1.post(t, "/api/runs", map[string]any{"prompt": "split the job in three"}, &run); st != http.StatusCreated {
		t.Fatalf("start a run on node 1: %d", st)
	}
	for i := range 3 {
		select {
		case <-children:
		case <-time.After(60 * time.Second):
			t.Fatalf("%d of 3 children reached the model", i)
		}
	}
	return g, n1, n2, s1, run.ID
}

// TestTwoServeNodesShareBackgroundRuns: two `cadre serve` nodes on one
// PostgreSQL store (store.dispatch any, their default). A run on node 1,
// whose lane has one place, starts three background children: node 1
// runs one, node 2 the other two; node 1's main agent hears of all three,
// once each.
func TestTwoServeNodesShareBackgroundRuns(t *testing.T) {
	g, n1, n2, s1, runID := twoNodes(t, "")
	waitTasks(t, n1, 30*time.Second, "three running, on two nodes", func(ts []task.Task) bool {
		return slices.Equal(byOwner(ts, task.StatusRunning), []int{1, 2})
	})
	g.open()
	ts := waitTasks(t, n2, 60*time.Second, "three completed and notified", func(ts []task.Task) bool {
		return len(ts) == 3 && !slices.ContainsFunc(ts, func(t task.Task) bool { return t.Status != task.StatusCompleted || !t.Notified })
	})
	var info struct {
		Result *struct{ Result string }
	}
	deadline := time.Now().Add(30 * time.Second)
	for info.Result == nil || !strings.Contains(info.Result.Result, "MAIN-ANSWER") {
		if time.Now().After(deadline) {
			t.Fatalf("node 1's run never answered after its children: %+v\n%s", info.Result, s1.stderr())
		}
		getJSON(t, s1.at("/api/runs/"+runID), &info)
		time.Sleep(50 * time.Millisecond)
	}
	if info.Result.Result != "MAIN-ANSWER: 3 reports" {
		t.Fatalf("node 1's answer = %q, want all three reports, once each", info.Result.Result)
	}
	for _, tk := range ts {
		if !strings.Contains(tk.Result, "CHILD-DONE") {
			t.Errorf("task %s result %q", tk.ID, tk.Result)
		}
	}
	for _, n := range []*env{n1, n2} {
		if m, _ := filepath.Glob(filepath.Join(n.home, "cadre.db*")); len(m) > 0 {
			t.Errorf("a PostgreSQL node created %v", m)
		}
	}
}

// TestServeNodeKilledMidRun: node 1 is killed while its background
// children run on both nodes. The child on node 2 completes; the one on
// node 1 is failed by node 2's orphan sweeper; no task stays running.
func TestServeNodeKilledMidRun(t *testing.T) {
	g, _, n2, s1, _ := twoNodes(t, `, "store": {"heartbeatSeconds": 1, "orphanAfterSeconds": 5}`)
	waitTasks(t, n2, 30*time.Second, "three running, on two nodes", func(ts []task.Task) bool {
		return slices.Equal(byOwner(ts, task.StatusRunning), []int{1, 2})
	})
	if err := s1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s1.done
	killed := time.Now()
	g.open()
	ts := waitTasks(t, n2, 30*time.Second, "all ended", func(ts []task.Task) bool {
		return len(ts) == 3 && !slices.ContainsFunc(ts, func(t task.Task) bool { return !t.Status.Terminal() })
	})
	t.Logf("no task running %s after node 1 was killed", time.Since(killed).Round(100*time.Millisecond))
	var failed, completed int
	for _, tk := range ts {
		switch {
		case tk.Status == task.StatusFailed && strings.Contains(tk.Error, "executor lost"):
			failed++
		case tk.Status == task.StatusCompleted:
			completed++
		default:
			t.Errorf("task %+v: want completed (node 2) or failed with executor lost (node 1)", tk)
		}
	}
	if failed != 1 || completed != 2 {
		t.Fatalf("failed %d, completed %d; want 1 and 2", failed, completed)
	}
}
