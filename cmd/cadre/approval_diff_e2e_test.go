package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// editScenario is a main agent that edits notes.txt, which asks.
const editScenario = `model: scripted-edit
agents:
  main:
    - text: "Renaming the fruit."
      tool_use:
        - name: Edit
          input: {file_path: notes.txt, old_string: PAPAYA, new_string: MANGO}
    - text: "Renamed."
`

// The web view's approval card for an Edit shows the diff the edit would
// make, its removed and added lines marked, instead of the JSON input;
// allowed on the page, the edit runs. The screenshot is kept among the
// test's artifacts (go test -artifacts).
func TestWebViewApprovalShowsTheDiff(t *testing.T) {
	exe := chromiumExe(t)
	e := newEnv(t)
	e.write("scenario.yaml", editScenario)
	s := e.serve("--model", "script:scenario.yaml", "--permission-mode", "default")
	runID := s.startRun(t, "Rename the fruit.")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1200, 700)
	page := openSession(t, ctx, b, s, runID)
	var lines []struct{ Kind, Text string }
	if err := page.Eval(ctx, `new Promise((resolve) => {
	  const get = () => [...document.querySelectorAll(".ask pre.diff span")].map((s) => ({Kind: s.className, Text: s.textContent.trimEnd()}));
	  if (get().length) return resolve(get());
	  new MutationObserver((_, obs) => { if (get().length) { obs.disconnect(); resolve(get()); } })
	    .observe(document, {childList: true, subtree: true});
	})`, &lines); err != nil {
		t.Fatalf("the approval never showed a diff: %v", err)
	}
	want := []struct{ Kind, Text string }{
		{"hunk", "@@ -1,2 +1,2 @@"}, {"", " Meeting notes."},
		{"del", "-The secret word is PAPAYA."}, {"add", "+The secret word is MANGO."},
	}
	if len(lines) != len(want) {
		t.Fatalf("diff lines %+v, want %+v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, lines[i], want[i])
		}
	}
	shot(t, ctx, page, "web-approval-diff")

	if err := page.Eval(ctx, `document.querySelector(".ask button.primary").click()`, nil); err != nil {
		t.Fatal(err)
	}
	waitResult(t, s, runID)
	if got, _ := os.ReadFile(filepath.Join(e.dir, "notes.txt")); !strings.Contains(string(got), "MANGO") {
		t.Errorf("notes.txt after the approval: %q", got)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

// waitResult reads the run's event stream until its turn's result.
func waitResult(t *testing.T, s *served, id string) {
	t.Helper()
	followEvents(t, s, id, "the run's result", func(data string) bool { return strings.Contains(data, `"type":"result"`) })
}
