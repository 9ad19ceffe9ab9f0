package runs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
)

// HasRunning answers for one agent's own background runs, through a
// burst of thousands and their ends, and Runs keeps every run in launch
// order with its end recorded.
func TestGroupHasRunning(t *testing.T) {
	g := NewGroup(context.Background())
	const n = 3000
	for i := range n {
		g.Add(New(Info{ID: fmt.Sprintf("c%d", i)}, Options{Background: true, Group: g}))
	}
	g.Add(New(Info{ID: "fg", ParentAgentID: "c0"}, Options{Group: g}))
	g.Add(New(Info{ID: "gc", ParentAgentID: "c1"}, Options{Background: true, Group: g}))
	for _, tc := range []struct {
		parent string
		want   bool
	}{{"", true}, {"c0", false}, {"c1", true}, {"c2", false}} {
		if got := g.HasRunning(tc.parent); got != tc.want {
			t.Errorf("HasRunning(%q) = %v, want %v", tc.parent, got, tc.want)
		}
	}
	for i := range n - 1 {
		g.remove(fmt.Sprintf("c%d", i))
	}
	if !g.HasRunning("") {
		t.Error(`HasRunning("") = false with one child left`)
	}
	g.remove(fmt.Sprintf("c%d", n-1))
	g.remove("gc")
	for _, parent := range []string{"", "c1"} {
		if g.HasRunning(parent) {
			t.Errorf("HasRunning(%q) = true after every run ended", parent)
		}
	}
	runs := g.Runs()
	if len(runs) != n+2 || runs[0].ID != "c0" || runs[n].ID != "fg" || runs[n+1].ID != "gc" {
		t.Fatalf("Runs: %d runs, first %s", len(runs), runs[0].ID)
	}
	if g.at["fg"] != n || len(g.at) != 1 {
		t.Errorf("the index of live runs: %v", g.at)
	}
	// An ended run is kept as its snapshot: its result (the child's whole
	// conversation) is not held for the group's life.
	for _, gr := range g.all {
		if gr.live != nil && gr.live.ID != "fg" {
			t.Errorf("the group still holds ended run %s", gr.live.ID)
		}
	}
}

// RunsChanged lists the runs that changed since the mark, in launch
// order, and says where each end is in the log so a caller can look again.
func TestGroupRunsChanged(t *testing.T) {
	g := NewGroup(context.Background())
	var tasks []*Live
	for i := range 5 {
		tasks = append(tasks, New(Info{ID: fmt.Sprintf("r%d", i)}, Options{Background: true, Group: g}))
		g.Add(tasks[i])
	}
	g.remove("r3")
	g.remove("r1")
	runs, ends, next := g.RunsChanged(0)
	if got := runIDs(runs); got != "r0 r1 r2 r3 r4" || fmt.Sprint(ends) != "[-1 6 -1 5 -1]" || next != 7 {
		t.Fatalf("RunsChanged(0) = %s %v %d, want r0 r1 r2 r3 r4 [-1 6 -1 5 -1] 7", got, ends, next)
	}
	g.remove("r4")
	runs, ends, next = g.RunsChanged(next)
	if got := runIDs(runs); got != "r4" || fmt.Sprint(ends) != "[7]" || next != 8 {
		t.Fatalf("RunsChanged(7) = %s %v %d, want r4 [7] 8", got, ends, next)
	}
	// Looking again from an earlier end lists the runs that changed since.
	if runs, _, _ := g.RunsChanged(6); runIDs(runs) != "r1 r4" {
		t.Fatalf("RunsChanged(6) = %s, want r1 r4", runIDs(runs))
	}
	// A run that starts or spends is listed again: through Observe, the
	// path a child's every reply takes.
	tasks[2].Observe(loop.Step{Message: llm.Message{Role: llm.RoleAssistant}, Response: llm.Reply(llm.Text("half done"))})
	runs, ends, next = g.RunsChanged(next)
	if got := runIDs(runs); got != "r2" || fmt.Sprint(ends) != "[-1]" || next != 9 {
		t.Fatalf("after r2 spent RunsChanged(8) = %s %v %d, want r2 [-1] 9", got, ends, next)
	}
	tasks[0].Begin(time.Now())
	g.touched(tasks[3]) // ended: nothing to log
	if runs, _, _ := g.RunsChanged(next); runIDs(runs) != "r0" {
		t.Fatalf("after r0 started RunsChanged(9) = %s, want r0", runIDs(runs))
	}
	// A run changed twice is listed once.
	if runs, _, _ := g.RunsChanged(7); runIDs(runs) != "r0 r2 r4" {
		t.Fatalf("RunsChanged(7) = %s, want r0 r2 r4", runIDs(runs))
	}
}

func runIDs(runs []Run) string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, " ")
}

// A result lists what changed since the one before, and finding that must
// cost what changed: with thousands of runs pending in the lane, one run's
// end lists that run alone (10,000 children listed every pending run on
// every result, 61% of the allocation of the run).
func TestGroupRunsChangedListsOnlyChanges(t *testing.T) {
	g := NewGroup(context.Background())
	const n = 2000
	for i := range n {
		t := New(Info{ID: fmt.Sprintf("r%d", i)}, Options{Background: true, Group: g})
		t.MarkQueued()
		g.Add(t)
	}
	runs, _, next := g.RunsChanged(0)
	if len(runs) != n {
		t.Fatalf("RunsChanged(0) listed %d runs, want all %d", len(runs), n)
	}
	if runs, _, _ := g.RunsChanged(next); len(runs) != 0 {
		t.Fatalf("RunsChanged with nothing changed listed %d runs: %s", len(runs), runIDs(runs[:min(len(runs), 5)]))
	}
	g.remove("r7")
	runs, ends, _ := g.RunsChanged(next)
	if got := runIDs(runs); got != "r7" || len(ends) != 1 || ends[0] < 0 {
		t.Fatalf("after one end RunsChanged = %d runs (%.40s…) ends %v, want r7 with its place in the log", len(runs), got, ends)
	}
}
