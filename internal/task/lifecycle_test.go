package task_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
)

var statuses = []task.Status{
	task.StatusPending, task.StatusRunning,
	task.StatusCompleted, task.StatusFailed, task.StatusKilled, task.StatusTimeout,
}

// TestLifecycleTable: every row is whole (valid statuses, someone who may
// cause it), every event appears once, and every status can be reached.
func TestLifecycleTable(t *testing.T) {
	seen := map[task.Event]bool{}
	reached := map[task.Status]bool{task.StatusPending: true, task.StatusRunning: true} // created so
	for _, tr := range task.Lifecycle() {
		if seen[tr.Event] {
			t.Errorf("event %q has two rows", tr.Event)
		}
		seen[tr.Event] = true
		if len(tr.From) == 0 || len(tr.By) == 0 || tr.Why == "" {
			t.Errorf("event %q: from %v, by %v, why %q: want all three", tr.Event, tr.From, tr.By, tr.Why)
		}
		for _, st := range append(slices.Clone(tr.From), tr.To) {
			if !st.Valid() {
				t.Errorf("event %q names the unknown status %q", tr.Event, st)
			}
		}
		reached[tr.To] = true
	}
	for _, st := range statuses {
		if !reached[st] {
			t.Errorf("no event leads to %s", st)
		}
	}
	// Lifecycle hands out a copy: a caller cannot change the table.
	rows := task.Lifecycle()
	rows[0].From[0] = "scribbled"
	if task.Lifecycle()[0].From[0] == "scribbled" {
		t.Error("changing Lifecycle's result changed the table")
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		from    task.Status
		ev      task.Event
		want    task.Status
		wantErr string
	}{
		{task.StatusPending, task.EventStart, task.StatusRunning, ""},
		{task.StatusRunning, task.EventComplete, task.StatusCompleted, ""},
		{task.StatusRunning, task.EventStop, task.StatusKilled, ""},
		{task.StatusPending, task.EventStop, task.StatusKilled, ""},
		{task.StatusRunning, task.EventTimeOut, task.StatusTimeout, ""},
		{task.StatusRunning, task.EventOrphan, task.StatusFailed, ""},
		{task.StatusCompleted, task.EventResume, task.StatusRunning, ""},
		{task.StatusKilled, task.EventRequeue, task.StatusPending, ""},
		{task.StatusCompleted, task.EventStart, "", "task t1: cannot start a completed task"},
		{task.StatusRunning, task.EventStart, "", "task t1: cannot start a running task"},
		{task.StatusKilled, task.EventComplete, "", "task t1: cannot complete a killed task"},
		{task.StatusCompleted, task.EventStop, "", "task t1: cannot stop a completed task"},
		{task.StatusFailed, task.EventOrphan, "", "task t1: cannot orphan a failed task"},
		{task.StatusTimeout, task.EventTimeOut, "", "task t1: cannot time out a timeout task"},
		{task.StatusCompleted, task.EventReattach, "", "task t1: cannot reattach a completed task"},
		{task.StatusRunning, "explode", "", `task t1: unknown event "explode"`},
	}
	for _, tt := range tests {
		in := task.Task{ID: "t1", Kind: task.KindLocalAgent, Status: tt.from, Result: "kept"}
		got, err := task.Apply(in, tt.ev)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Apply(%s, %s) err = %v, want %q", tt.from, tt.ev, err, tt.wantErr)
			}
			if tt.ev != "explode" && !errors.Is(err, task.ErrTransition) {
				t.Errorf("Apply(%s, %s) err = %v, want one wrapping ErrTransition", tt.from, tt.ev, err)
			}
			if got != in {
				t.Errorf("a refused Apply changed the task: %+v", got)
			}
			continue
		}
		if err != nil || got.Status != tt.want || got.Result != "kept" {
			t.Errorf("Apply(%s, %s) = %s (result %q), %v; want %s, the rest unchanged", tt.from, tt.ev, got.Status, got.Result, err, tt.want)
		}
	}
}

// TestEnds: the event that ends a run with each terminal status leads to
// that status.
func TestEnds(t *testing.T) {
	for _, st := range statuses {
		ev, err := task.Ends(st)
		if !st.Terminal() {
			if err == nil {
				t.Errorf("Ends(%s) = %s, want an error", st, ev)
			}
			continue
		}
		got, err := task.Apply(task.Task{ID: "t1", Status: task.StatusRunning}, ev)
		if err != nil || got.Status != st {
			t.Errorf("Ends(%s) = %s, which leads to %s (%v)", st, ev, got.Status, err)
		}
	}
}
