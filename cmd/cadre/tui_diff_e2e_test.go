package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// An Edit in the default mode asks with the diff it would make on the
// screen, and runs once allowed; its file is untouched until then.
func TestTUIApprovalShowsTheEditsDiff(t *testing.T) {
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if !c.anyToolResult() {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Edit", Input: map[string]any{"file_path": "notes.txt", "old_string": "PAPAYA", "new_string": "MANGO"}}}}
		}
		if r := c.results("Edit"); len(r) == 1 && !r[0].IsError {
			return testkit.Reply{Text: "The fruit is renamed."}
		}
		return testkit.Reply{Text: "TEST: the Edit failed: " + c.dump()}
	}))
	s := e.tui()
	ask(s, "Rename the fruit")
	screen := s.WaitFor("wants to use Edit", screenWait)
	for _, want := range []string{"notes.txt", "@@ -1,2 +1,2 @@", " Meeting notes.", "-The secret word is PAPAYA.", "+The secret word is MANGO."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "old_string") {
		t.Errorf("the prompt shows the call's strings, not its diff:\n%s", screen)
	}
	if got, _ := os.ReadFile(filepath.Join(e.dir, "notes.txt")); strings.Contains(string(got), "MANGO") {
		t.Fatal("the edit ran before it was approved")
	}
	s.Type("y")
	s.WaitFor("The fruit is renamed.", screenWait)
	if got, _ := os.ReadFile(filepath.Join(e.dir, "notes.txt")); !strings.Contains(string(got), "MANGO") {
		t.Errorf("notes.txt = %q after the approval", got)
	}
}
