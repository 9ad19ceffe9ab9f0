package shelltask

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/task"
)

// The output file keeps at most the bound: the oldest bytes go, and a note
// at the top says how many.
func TestShellOutputBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.output")
	o, err := OpenOutput(path, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i := range 2000 {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		if _, err := o.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() > 2048 {
			t.Fatalf("after %d lines the file is %d bytes (%v), over 2048", i+1, fi.Size(), err)
		}
	}
	o.Close()
	b, _ := os.ReadFile(path)
	note, kept, _ := strings.Cut(string(b), "\n")
	var dropped int
	if _, err := fmt.Sscanf(note, "[cadre: %d earlier bytes", &dropped); err != nil {
		t.Fatalf("no note at the top: %q", note)
	}
	if dropped+len(kept) != all.Len() || !strings.HasSuffix(all.String(), kept) || !strings.HasPrefix(kept, "line ") {
		t.Errorf("note says %d dropped, %d kept of %d: the kept part is not the newest output from a line's start", dropped, len(kept), all.Len())
	}
}

// TestEnd: how a command ended becomes its record's status and error, and
// the record reads back as an exit code and a sentence.
func TestEnd(t *testing.T) {
	stopped := errors.New("stopped by TaskStop")
	for _, tc := range []struct {
		name    string
		end     builtin.ShellEnd
		cause   error
		status  task.Status
		code    int
		exited  bool
		summary string
	}{
		{"exit 0", builtin.ShellEnd{}, nil, task.StatusCompleted, 0, true, `Background command "x" completed (exit code 0)`},
		{"exit 3", builtin.ShellEnd{ExitCode: 3, Status: "exit code 3"}, nil, task.StatusFailed, 3, true, `Background command "x" failed with exit code 3`},
		{"signal", builtin.ShellEnd{ExitCode: -1, Status: "killed by signal 9"}, nil, task.StatusFailed, 0, false, `Background command "x" failed: killed by signal 9`},
		{"stopped", builtin.ShellEnd{ExitCode: -1}, stopped, task.StatusKilled, 0, false, `Background command "x" was stopped`},
		{"timed out", builtin.ShellEnd{TimedOut: true}, stopped, task.StatusTimeout, 0, false, `Background command "x" timed out and was killed`},
		{"not started", builtin.ShellEnd{Err: errors.New("no shell")}, nil, task.StatusFailed, 0, false, `Background command "x" failed: no shell`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, errText := Status(tc.end, tc.cause)
			if status != tc.status {
				t.Fatalf("status %s, want %s", status, tc.status)
			}
			rec := task.Task{Status: status, Error: errText}
			if code, exited := ExitCode(rec); code != tc.code || exited != tc.exited {
				t.Errorf("exit code %d, %v; want %d, %v", code, exited, tc.code, tc.exited)
			}
			if got := Summary("x", rec); got != tc.summary {
				t.Errorf("summary %q, want %q", got, tc.summary)
			}
		})
	}
}

// TestText: a reader gets the newest output, only the matching lines with
// a filter; a file not made yet reads as empty; a bad filter says so.
func TestText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.output")
	if got, err := Text(path, 100, nil); got != "" || err != nil {
		t.Fatalf("missing file: %q, %v; want empty", got, err)
	}
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := Text(path, 6, nil); got != "…three\n" {
		t.Errorf("tail of 6 bytes: %q", got)
	}
	if got, _ := Text(path, 100, regexp.MustCompile("^t")); got != "two\nthree\n" {
		t.Errorf("filtered: %q", got)
	}
	if _, err := Filter("("); err == nil || !strings.Contains(err.Error(), "RE2") {
		t.Errorf("bad filter: %v", err)
	}
	if re, err := Filter(""); re != nil || err != nil {
		t.Errorf("empty filter: %v, %v", re, err)
	}
}
