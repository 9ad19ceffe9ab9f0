package subagent

import (
	"context"
	"fmt"
	"testing"
)

// HasRunning answers for one agent's own background runs, through a
// burst of thousands and their ends, and Runs keeps every run in launch
// order with its end recorded.
func TestGroupHasRunning(t *testing.T) {
	g := NewGroup(context.Background())
	const n = 3000
	for i := range n {
		g.add(&liveTask{id: fmt.Sprintf("c%d", i), background: true})
	}
	g.add(&liveTask{id: "fg", parentAgentID: "c0"})
	g.add(&liveTask{id: "gc", parentAgentID: "c1", background: true})
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
}
