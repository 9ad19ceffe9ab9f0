package spawnpolicy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
)

// TestOwnHooks: an agent file's hooks run for its runs when the user wrote
// it, a project's only once the project is trusted, none with
// disableAllHooks; a Stop hook in an agent file fires on SubagentStop.
func TestOwnHooks(t *testing.T) {
	hooks := map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true"}}}}}
	user := agent.Definition{Name: "u", Source: agent.SourceUser, Path: "/home/u/.claude/agents/u.md", Hooks: hooks}
	project := agent.Definition{Name: "p", Source: agent.SourceProject, Path: "/w/.claude/agents/p.md", Hooks: hooks}
	for _, tc := range []struct {
		name       string
		def        agent.Definition
		project    bool
		disableAll bool
		runs       bool
		err        error
	}{
		{"the user's", user, false, false, true, nil},
		{"an untrusted project's", project, false, false, false, ErrProjectHooks},
		{"a trusted project's", project, true, false, true, nil},
		{"disableAllHooks", user, true, true, false, nil},
		{"none", agent.Definition{Source: agent.SourceUser}, false, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := OwnHooks(tc.def, tc.project, tc.disableAll)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if runs := len(c) > 0; runs != tc.runs {
				t.Fatalf("hooks %v, want running %v", c, tc.runs)
			}
			if tc.runs && (len(c[hook.SubagentStop]) != 1 || len(c[hook.Stop]) != 0) {
				t.Errorf("the file's Stop hook is on %v, want SubagentStop", c)
			}
		})
	}
	bad := user
	bad.Hooks = map[string]any{"Stop": "not a list"}
	if _, err := OwnHooks(bad, false, false); err == nil {
		t.Error("malformed hooks: no error")
	}
}

// TestMemory: a definition with a memory scope gets its memory directory
// writable and allowed; one without gets nothing.
func TestMemory(t *testing.T) {
	project := t.TempDir()
	pol := permission.Policy{Home: t.TempDir()}
	dir, err := Memory(agent.Definition{Name: "keeper", Memory: "project"}, project, &pol)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dir, project+string(filepath.Separator)) || len(pol.Writable) != 1 || pol.Writable[0] != dir || len(pol.Rules.Allow) == 0 {
		t.Errorf("memory %q: writable %v, %d allow rules", dir, pol.Writable, len(pol.Rules.Allow))
	}
	none := permission.Policy{}
	if dir, err := Memory(agent.Definition{Name: "plain"}, project, &none); dir != "" || err != nil || len(none.Rules.Allow) != 0 {
		t.Errorf("no memory scope: %q, %v, %v", dir, err, none.Rules.Allow)
	}
}
