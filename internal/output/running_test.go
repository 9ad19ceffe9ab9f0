package output

import (
	"fmt"
	"slices"
	"testing"
)

// The list keeps start order through removals and the packing they
// cause, and answers for each id whether it is still running.
func TestRunningTasks(t *testing.T) {
	var r runningTasks
	var want []string
	for i := range 10 {
		id := fmt.Sprintf("t%d", i)
		r.add(backgroundTaskJSON{TaskID: id})
		want = append(want, id)
	}
	for _, id := range []string{"t3", "t0", "t9", "t4", "t5", "t6"} { // the sixth packs
		if !r.remove(id) {
			t.Fatalf("remove(%s) = false, want true", id)
		}
		want = slices.DeleteFunc(want, func(s string) bool { return s == id })
		if r.has(id) {
			t.Errorf("has(%s) after its removal", id)
		}
		if got := taskIDs(r.snapshot()); !slices.Equal(got, want) {
			t.Fatalf("after remove(%s): %v, want %v", id, got, want)
		}
	}
	if r.remove("t3") || r.remove("unknown") {
		t.Error("remove of an id not running reported true")
	}
	r.add(backgroundTaskJSON{TaskID: "t10"})
	want = append(want, "t10")
	for _, id := range want {
		if !r.has(id) {
			t.Errorf("has(%s) = false", id)
		}
	}
	if got := taskIDs(r.snapshot()); !slices.Equal(got, want) {
		t.Fatalf("after a new start: %v, want %v", got, want)
	}
}

func taskIDs(ts []backgroundTaskJSON) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.TaskID)
	}
	return out
}
