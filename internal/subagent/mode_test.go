package subagent

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/llm"
)

// TestChildPermissionMode checks S-P3 end to end: the child's fake Edit
// call inside or outside the workspace runs or is refused according to
// the mode its policy ends up with.
func TestChildPermissionMode(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	tests := []struct {
		name    string
		parent  permission.Mode
		defMode string
		deny    []string
		outside bool   // edit outside the workspace
		wantRun bool   // the Edit tool ran
		wantMsg string // in the denial the child saw
	}{
		{name: "default child is acceptEdits: edits inside run", parent: permission.ModeAcceptEdits, wantRun: true},
		// issue 22: delegating is no way around the user's default mode.
		{name: "a default parent's child asks for edits", parent: permission.ModeDefault, wantMsg: "needs approval in default mode"},
		{name: "a definition's acceptEdits is capped by a default parent", parent: permission.ModeDefault, defMode: "acceptEdits", wantMsg: "needs approval in default mode"},
		{name: "acceptEdits still refuses edits outside", parent: permission.ModeAcceptEdits, outside: true, wantMsg: "which is outside the workspace"},
		{name: "definition mode default asks, and nobody can answer", parent: permission.ModeAcceptEdits, defMode: "default", wantMsg: "needs approval in default mode"},
		{name: "definition mode plan is read-only", parent: permission.ModeDefault, defMode: "plan", wantMsg: "plan mode is read-only"},
		{name: "a plan parent gives a plan child", parent: permission.ModePlan, defMode: "acceptEdits", wantMsg: "plan mode is read-only"},
		{name: "a plan parent gives plan even for bypass", parent: permission.ModePlan, defMode: "bypassPermissions", wantMsg: "plan mode is read-only"},
		{name: "bypass asked by a non-bypass parent is acceptEdits", parent: permission.ModeAcceptEdits, defMode: "bypassPermissions", outside: true, wantMsg: "which is outside the workspace"},
		{name: "bypass from a bypass parent", parent: permission.ModeBypass, defMode: "bypassPermissions", outside: true, wantRun: true},
		{name: "a bypass parent's child is bypass", parent: permission.ModeBypass, outside: true, wantRun: true},
		{name: "a bypass parent's child is bypass whatever its definition", parent: permission.ModeBypass, defMode: "default", outside: true, wantRun: true},
		{name: "deny rules hold for a bypass child", parent: permission.ModeBypass, defMode: "bypassPermissions", outside: true,
			deny: []string{"Edit(/" + outside + ")"}, wantMsg: "denied by rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := ""
			if tt.defMode != "" {
				front = "permissionMode: " + tt.defMode + "\n"
			}
			var h *harness
			h = newHarness(t, setup{
				agents: map[string]string{"editor": agentFile("editor", "Edits", front, "Edit.")},
				mode:   tt.parent, deny: tt.deny,
				script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
					if turn(req) == 0 {
						path := filepath.Join(h.dir, "inside.txt")
						if tt.outside {
							path = outside
						}
						return replyBlocks(use("toolu_edit", "Edit", fakeIn{FilePath: path})), nil
					}
					return reply("edit said: " + lastToolResult(req)), nil
				},
			})
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "edit", Prompt: "edit it", SubagentType: "editor"})
			if res.IsError {
				t.Fatalf("spawn failed: %s", resultText(res))
			}
			ran := slices.ContainsFunc(h.toolCalls(), func(c fakeCall) bool { return c.Tool == "Edit" })
			if ran != tt.wantRun {
				t.Errorf("Edit ran = %v, want %v; result:\n%s", ran, tt.wantRun, resultText(res))
			}
			if tt.wantMsg != "" && !strings.Contains(resultText(res), tt.wantMsg) {
				t.Errorf("result lacks %q:\n%s", tt.wantMsg, resultText(res))
			}
		})
	}
}
