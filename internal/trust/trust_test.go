package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/command"
)

// TestStorePinsTheDigest: trust holds for exactly what the project asked
// for; any change of an item asks again; revoke forgets; the file lives
// where the store says (CADRE_HOME), not in the project.
func TestStorePinsTheDigest(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	root, err := Root(proj)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(home)
	items := []Item{{Source: "a", Key: "hooks.SessionStart", Value: "echo one"}, {Source: "b", Key: "permissions.allow", Value: "Bash"}}
	if s, err := st.State(root, items); err != nil || s != Untrusted {
		t.Fatalf("before: %v %v", s, err)
	}
	if err := st.Grant(root, items, time.Now()); err != nil {
		t.Fatal(err)
	}
	reordered := []Item{items[1], items[0]}
	if s, _ := st.State(root, reordered); s != Trusted {
		t.Errorf("the same items in another order: %v", s)
	}
	changed := []Item{items[0], {Source: "b", Key: "permissions.allow", Value: "Bash(rm:*)"}}
	if s, _ := st.State(root, changed); s != Changed {
		t.Errorf("one value changed: %v, want Changed", s)
	}
	if s, _ := st.State(root, items[:1]); s != Changed {
		t.Errorf("one item gone: %v, want Changed", s)
	}
	// A boundary inside a value cannot forge another list.
	forged := []Item{{Source: "a", Key: "hooks.SessionStart", Value: "echo one\x00b\x00permissions.allow\x00Bash"}}
	if Digest(forged) == Digest(items) {
		t.Error("two lists share a digest")
	}
	if ok, err := st.Revoke(root); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if s, _ := st.State(root, items); s != Untrusted {
		t.Errorf("after revoke: %v", s)
	}
	if _, err := os.Stat(filepath.Join(home, FileName)); err != nil {
		t.Error(err)
	}
	entries, _ := os.ReadDir(proj)
	if len(entries) != 0 {
		t.Errorf("the store wrote into the project: %v", entries)
	}
	// A link to a trusted project is that project.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(proj, link)
	if r, _ := Root(link); r != root {
		t.Errorf("Root(link) = %s, want %s", r, root)
	}
	// A broken store is an error that says where, not trust.
	os.WriteFile(st.Path, []byte("{"), 0o600)
	if _, err := st.State(root, items); err == nil || !strings.Contains(err.Error(), st.Path) {
		t.Errorf("a broken store: %v", err)
	}
}

// TestNarrowAgentAndCommand: an untrusted project's agent file keeps its
// prompt and narrowing rules and loses its grants, its mode, its own MCP
// servers and hooks, and memory: user; a command keeps allowed-tools as a
// restriction and grants nothing.
func TestNarrowAgentAndCommand(t *testing.T) {
	d := agent.Definition{Name: "x", Path: "/p/.opencode/agent/x.md", Prompt: "P", Allow: []string{"Bash"}, Deny: []string{"Read(./s)"},
		PermissionMode: "bypassPermissions", MCPServers: []any{"gh"}, Hooks: map[string]any{"Stop": 1}, Memory: "user",
		AllowAgents: []string{"*"}}
	items := NarrowAgent(&d)
	if d.Prompt != "P" || len(d.Deny) != 1 || len(d.Allow) != 0 || d.PermissionMode != "" || d.MCPServers != nil || d.Hooks != nil || d.Memory != "" || d.AllowAgents != nil {
		t.Errorf("narrowed %+v", d)
	}
	if len(items) != 6 {
		t.Errorf("items %v", items)
	}
	p := agent.Definition{Name: "y", Memory: "project"}
	if items := NarrowAgent(&p); len(items) != 0 || p.Memory != "project" {
		t.Errorf("memory: project is the project's own: %v %+v", items, p)
	}
	c := command.Command{Name: "deploy", Path: "/p/.claude/skills/deploy/SKILL.md", AllowedTools: []string{"Bash"}}
	if items := NarrowCommand(&c); len(items) != 1 || !c.NoGrant || len(c.AllowedTools) != 1 {
		t.Errorf("command %+v, items %v", c, items)
	}
}
