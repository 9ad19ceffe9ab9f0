package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	for _, tc := range []struct{ scope, want string }{
		{ScopeUser, "/home/u/.claude/agent-memory/memo"},
		{ScopeProject, "/p/.claude/agent-memory/memo"},
		{ScopeLocal, "/p/.claude/agent-memory-local/memo"},
		{"", ""},
	} {
		if got := Dir(tc.scope, "memo", "/p", "/home/u"); got != filepath.FromSlash(tc.want) {
			t.Errorf("Dir(%q) = %q, want %q", tc.scope, got, tc.want)
		}
	}
	if Dir(ScopeUser, "memo", "/p", "") != "" {
		t.Error("user scope without a home has a directory")
	}
}

func TestPrompt(t *testing.T) {
	dir := t.TempDir()
	p, err := Prompt(filepath.Join(dir, "none"), dir)
	if err != nil || !strings.Contains(p, "no memories yet") {
		t.Fatalf("missing memory: %q, %v", p, err)
	}
	var long strings.Builder
	long.WriteString("- [Prefers tabs](style.md)\n")
	for i := 0; i < 300; i++ {
		long.WriteString("- line\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(long.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = Prompt(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "Prefers tabs") || !strings.Contains(p, dir) || !strings.Contains(p, "goes on past line 200") {
		t.Errorf("prompt lacks the index, the directory or the cut: %q", p[:200])
	}
	if n := strings.Count(p, "- line"); n != MaxLines-1 {
		t.Errorf("%d index lines in the prompt, want %d", n, MaxLines-1)
	}
}

// A checked-in memory that links to a private file reads nothing.
func TestPromptRefusesALinkOut(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "id_rsa")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(base, "proj")
	dir := Dir(ScopeProject, "memo", project, "")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	p, err := Prompt(dir, Root(ScopeProject, project, ""))
	if err == nil || strings.Contains(p, "PRIVATE KEY") {
		t.Fatalf("prompt %q, error %v: the link out must be refused", p, err)
	}
}

// TestCheckDirRefusesLinks is issue 22's memory attack: a committed
// .claude/agent-memory/<agent> link to ../../.git would let the agent's
// memory writes rewrite .git/config.
func TestCheckDirRefusesLinks(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.MkdirAll(filepath.Join(root, ".claude", "agent-memory"), 0o755)
	dir := Dir(ScopeProject, "evil", root, "")
	if err := CheckDir(dir, root); err != nil {
		t.Fatalf("a memory directory not made yet: %v", err)
	}
	if err := os.Symlink("../../.git", dir); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir, root); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked memory directory: %v", err)
	}
	os.Remove(dir)
	os.RemoveAll(filepath.Join(root, ".claude", "agent-memory"))
	os.Symlink("../.git", filepath.Join(root, ".claude", "agent-memory"))
	if err := CheckDir(dir, root); err == nil {
		t.Error("a linked parent of the memory directory was accepted")
	}
}
