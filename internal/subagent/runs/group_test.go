package runs

import (
	"context"
	"fmt"
	"strings"
	"testing"
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

// RunsChanged lists the live runs and those that ended since the mark, in
// launch order, and says where each end is so a caller can look again.
func TestGroupRunsChanged(t *testing.T) {
	g := NewGroup(context.Background())
	for i := range 5 {
		g.Add(New(Info{ID: fmt.Sprintf("r%d", i)}, Options{Background: true, Group: g}))
	}
	g.remove("r3")
	g.remove("r1")
	runs, ends, next := g.RunsChanged(0)
	if got := runIDs(runs); got != "r0 r1 r2 r3 r4" || fmt.Sprint(ends) != "[-1 1 -1 0 -1]" || next != 2 {
		t.Fatalf("RunsChanged(0) = %s %v %d, want r0 r1 r2 r3 r4 [-1 1 -1 0 -1] 2", got, ends, next)
	}
	g.remove("r4")
	runs, ends, next = g.RunsChanged(next)
	if got := runIDs(runs); got != "r0 r2 r4" || fmt.Sprint(ends) != "[-1 -1 2]" || next != 3 {
		t.Fatalf("RunsChanged(2) = %s %v %d, want r0 r2 r4 [-1 -1 2] 3", got, ends, next)
	}
	// Looking again from an earlier end lists the runs that ended since.
	if runs, _, _ := g.RunsChanged(1); runIDs(runs) != "r0 r1 r2 r4" {
		t.Fatalf("RunsChanged(1) = %s, want r0 r1 r2 r4", runIDs(runs))
	}
}

func runIDs(runs []Run) string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, " ")
}
