package permission

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGrantsAllowForTheirSessionOnly(t *testing.T) {
	g := &Grants{}
	p := Policy{Workspace: "/ws", Rules: mustRules(t, "", "", "Bash(rm:*)"), Grants: g}
	if got := decide(t, p, "Bash", "git status"); got != "ask" {
		t.Fatalf("before the grant: %s, want ask", got)
	}
	g.Add("other-session", mustRules(t, "Bash(git status)", "", "").Allow...)
	if got := decide(t, p, "Bash", "git status"); got != "ask" {
		t.Errorf("another session's grant: %s, want ask", got)
	}
	g.Add(env.SessionID, mustRules(t, "Bash(git status), Bash(rm:*)", "", "").Allow...)
	if got := decide(t, p, "Bash", "git status"); got != "allow" {
		t.Errorf("granted: %s, want allow", got)
	}
	if got := decide(t, p, "Bash", "rm -rf x"); got != "deny" {
		t.Errorf("a grant beat a deny rule: %s", got)
	}
	g.Clear(env.SessionID)
	if got := decide(t, p, "Bash", "git status"); got != "ask" {
		t.Errorf("after Clear: %s, want ask", got)
	}
}

func TestWritableLiftsOnlyItsOwnProtection(t *testing.T) {
	ws := t.TempDir()
	mem := filepath.Join(ws, ".claude", "agent-memory", "memo")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A link planted in the memory directory, pointing at git's config.
	if err := os.Symlink(filepath.Join(ws, ".git"), filepath.Join(mem, "sneaky")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ModeAcceptEdits, Workspace: ws, Writable: []string{mem}}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(mem, "MEMORY.md"), "allow"},
		{filepath.Join(ws, ".claude", "settings.json"), "ask"},
		{filepath.Join(mem, "sneaky", "config"), "ask"},
		{filepath.Join(mem, "..", "other", "MEMORY.md"), "ask"},
	} {
		if got := decide(t, p, "Write", tc.path); got != tc.want {
			t.Errorf("Write %s: %s, want %s", tc.path, got, tc.want)
		}
	}
}
