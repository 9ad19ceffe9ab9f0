package output

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
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

// The background_tasks_changed line is put together from its entries'
// JSON, each encoded once when the task starts: at 10,000 tasks the line
// is half a megabyte, written after every burst. Its bytes must be those
// that encoding the whole line anew writes — HTML left as it is, as on
// every stream-json line.
func TestBackgroundTasksLineAsEncoded(t *testing.T) {
	var s stream
	e := cadre.Event{UUID: "ev-1", SessionID: "sess-<1>"}
	type lineJSON struct {
		Type      string               `json:"type"`
		Subtype   string               `json:"subtype"`
		Tasks     []backgroundTaskJSON `json:"tasks"`
		UUID      string               `json:"uuid"`
		SessionID string               `json:"session_id"`
	}
	check := func(when string) {
		t.Helper()
		var want bytes.Buffer
		if err := encode(&want, lineJSON{"system", "background_tasks_changed", s.background.snapshot(), ids.Derive("stream-json background_tasks_changed", e.UUID), e.SessionID}); err != nil {
			t.Fatal(err)
		}
		if got := string(s.backgroundTasks(e)); got != want.String() {
			t.Errorf("%s:\n%s\nwant\n%s", when, got, want.String())
		}
	}
	check("no tasks")
	for i, d := range []string{`count <files> & "dirs"`, "naïve\u2028line\ttab", ""} {
		id := fmt.Sprintf("t%d", i)
		task := backgroundTaskJSON{TaskID: id, RunID: id, TaskType: "local_agent", SubagentType: "Explore", Description: d}
		if i == 2 {
			task.TaskType, task.SubagentType = "local_bash", ""
		}
		s.background.add(task)
	}
	check("three tasks")
	s.background.remove("t1")
	check("after an end")
	s.background.remove("t0") // packs
	check("after the list packed")
}

// BenchmarkBackgroundTasksLine writes one background_tasks_changed line of
// 10,000 running tasks.
func BenchmarkBackgroundTasksLine(b *testing.B) {
	var s stream
	for i := range 10_000 {
		id := fmt.Sprintf("01a2%04d-0f7b-7059-8885-7dba9042a94c", i)
		s.background.add(backgroundTaskJSON{TaskID: id, RunID: id, TaskType: "local_agent", SubagentType: "general-purpose", Description: fmt.Sprintf("part %d", i)})
	}
	e := cadre.Event{UUID: "ev-1", SessionID: "sess-1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.Discard.Write(s.backgroundTasks(e)); err != nil {
			b.Fatal(err)
		}
	}
}
