package opencode

import (
	"strings"
	"testing"
)

// TestSpawnToolsDoNotSayTrust: the task tool's description does not tell
// the model to trust what a subagent says (issue 8, item 9).
func TestSpawnToolsDoNotSayTrust(t *testing.T) {
	for name, text := range map[string]string{"task_tool.md": taskToolText} {
		if strings.Contains(strings.ToLower(text), "trusted") {
			t.Errorf("%s tells the model to trust subagent output", name)
		}
	}
}
