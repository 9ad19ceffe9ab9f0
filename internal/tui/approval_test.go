package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
)

func editRequest(change *cadre.FileChange) cadre.PermissionRequest {
	input, _ := json.Marshal(map[string]string{"file_path": change.Path, "old_string": "PAPAYA", "new_string": "MANGO"})
	return cadre.PermissionRequest{Tool: "Edit", Input: input, Agent: "main", Target: change.Path, Edits: true, Change: change,
		Reason: "Edit changes files, which needs approval in default mode"}
}

// An Edit's approval shows the diff it would make, not its JSON strings.
func TestApprovalShowsTheDiff(t *testing.T) {
	h := newHarness(t)
	got := ask(t, h.m.cfg.Approvals, editRequest(&cadre.FileChange{
		Path: "/work/notes.txt", Old: "Meeting notes.\nThe secret word is PAPAYA.\n", New: "Meeting notes.\nThe secret word is MANGO.\n",
		Diff: "--- /work/notes.txt\n+++ /work/notes.txt\n@@ -1,2 +1,2 @@\n Meeting notes.\n-The secret word is PAPAYA.\n+The secret word is MANGO.\n",
	}))
	h.pending(1)
	h.golden("approval_diff")
	h.typeText("y")
	if d := <-got; !d.Allow {
		t.Fatalf("y: %+v", d)
	}
}

// A long diff is cut, saying how much is left out; a new file says so.
func TestApprovalDiffIsCut(t *testing.T) {
	h := newHarness(t)
	var diff strings.Builder
	diff.WriteString("--- /dev/null\n+++ /work/new.txt\n@@ -0,0 +1,40 @@\n")
	for range 40 {
		diff.WriteString("+a line\n")
	}
	got := ask(t, h.m.cfg.Approvals, editRequest(&cadre.FileChange{Path: "/work/new.txt", Create: true, New: strings.Repeat("a line\n", 40), Diff: diff.String()}))
	h.pending(1)
	s := h.m.Screen()
	if !strings.Contains(s, "/work/new.txt (new file)") || !strings.Contains(s, "… 31 more lines of the diff") {
		t.Errorf("screen:\n%s", s)
	}
	if !strings.Contains(s, "y/1 allow once") {
		t.Errorf("a long diff pushed the keys off the screen:\n%s", s)
	}
	h.typeText("y")
	<-got
}

// A file's text cannot drive the terminal from the approval prompt.
func TestApprovalDiffIsCleaned(t *testing.T) {
	h := newHarness(t)
	got := ask(t, h.m.cfg.Approvals, editRequest(&cadre.FileChange{
		Path: "/work/x.txt", Old: "a\n", New: "\x1b]0;pwned\x07\x1b[2Jb\r\n",
		Diff: "--- /work/x.txt\n+++ /work/x.txt\n@@ -1 +1 @@\n-a\n+\x1b]0;pwned\x07\x1b[2Jb\r\n",
	}))
	h.pending(1)
	if v := h.m.View().Content; strings.Contains(v, "pwned") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\r") {
		t.Errorf("the prompt draws the file's escape sequences: %q", v)
	}
	if !strings.Contains(h.m.Screen(), "+b") {
		t.Errorf("the cleaned line is not shown:\n%s", h.m.Screen())
	}
	h.typeText("y")
	<-got
}
