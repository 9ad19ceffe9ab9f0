package runlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestFile: the output file of a run started in the background is its
// transcript, shown as the log a log file would hold, ended by the run's
// status and result; a log file is shown as it is.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "t1.output")
	w, err := session.OpenWriter(transcript)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []session.Entry{
		{Type: session.EntryUser, SessionID: "t1", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("count the files")}}},
		{Type: session.EntryAssistant, SessionID: "t1", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text("looking"), llm.ToolUse("toolu_1", "Glob", json.RawMessage(`{"pattern":"*"}`))}}},
		{Type: session.EntryUser, SessionID: "t1", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			{Type: llm.BlockToolResult, ToolUseID: "toolu_1", Content: []llm.Block{llm.Text("a.go\nb.go")}}}}},
		{Type: session.EntryAssistant, SessionID: "t1", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("2 files")}}},
	} {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	logFile := filepath.Join(dir, "t2.output")
	if err := os.WriteFile(logFile, []byte("working\n→ Read {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		rec  task.Task
		want string
	}{
		{"transcript, running", task.Task{ID: "t1", OutputFile: transcript, Status: task.StatusRunning},
			"[message] count the files\nlooking\n→ Glob {\"pattern\":\"*\"}\n← a.go b.go\n2 files\n"},
		{"transcript, ended", task.Task{ID: "t1", OutputFile: transcript, Status: task.StatusCompleted, Result: "2 files"},
			"[message] count the files\nlooking\n→ Glob {\"pattern\":\"*\"}\n← a.go b.go\n2 files\n\n[completed]\n2 files\n"},
		{"log file", task.Task{ID: "t2", OutputFile: logFile, Status: task.StatusCompleted}, "working\n→ Read {}\n"},
	} {
		got, err := File(tc.rec)
		if err != nil || got != tc.want {
			t.Errorf("%s: File = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	// A run gets its output file when it starts: before, there is none.
	none := filepath.Join(dir, "none")
	for _, tc := range []struct {
		name string
		rec  task.Task
		want string
	}{
		{"waiting in the lane", task.Task{ID: "t3", OutputFile: none, Status: task.StatusPending}, ""},
		{"stopped while it waited", task.Task{ID: "t3", OutputFile: none, Status: task.StatusKilled, Result: "stopped"}, "\n[killed]\nstopped\n"},
	} {
		got, err := File(tc.rec)
		if err != nil || got != tc.want {
			t.Errorf("%s: File = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	started := task.Task{ID: "t3", OutputFile: none, Status: task.StatusRunning, Started: time.Now()}
	if _, err := File(started); err == nil {
		t.Error("File of a started run whose file is missing: no error")
	}
}
