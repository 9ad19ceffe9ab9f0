package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookLayers: every layer's hooks are kept, in order — each Claude
// Code project file just below cadre's of the same scope, then
// ~/.claude's — and a project's shared settings cannot approve the
// project's hooks.
func TestHookLayers(t *testing.T) {
	e := newEnv(t)
	hook := func(cmd string) string {
		return `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + cmd + `", "timeout": 5}]}]}`
	}
	e.write(t, ScopeUser, `{"hooks": `+hook("user")+`}`)
	e.write(t, ScopeProject, `{"enableProjectHooks": true, "hooks": `+hook("project")+`}`)
	e.write(t, ScopeLocal, `{"hooks": `+hook("local")+`}`)
	for rel, cmd := range map[string]string{
		filepath.Join(e.home, ".claude", "settings.json"):       "claude-user",
		filepath.Join(e.proj, ".claude", "settings.json"):       "claude-project",
		filepath.Join(e.proj, ".claude", "settings.local.json"): "claude-local",
	} {
		os.MkdirAll(filepath.Dir(rel), 0o755)
		// Claude Code's other keys are its business: no warning for them.
		if err := os.WriteFile(rel, []byte(`{"theme": "dark", "hooks": `+hook(cmd)+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := e.mustLoad(t, Overrides{})
	var got []string
	for _, h := range l.Hooks {
		got = append(got, h.Scope+":"+h.Hooks["PreToolUse"][0].Hooks[0].Command)
	}
	want := "user:user project:claude-project project:project local:claude-local local:local user:claude-user"
	if strings.Join(got, " ") != want {
		t.Errorf("hook layers %q, want %q", strings.Join(got, " "), want)
	}
	if l.Settings.EnableProjectHooks {
		t.Error("the project's shared settings approved its own hooks")
	}
	if len(l.Warnings) != 1 || l.Warnings[0].Key != "enableProjectHooks" {
		t.Errorf("warnings %v", l.Warnings)
	}

	e.write(t, ScopeLocal, `{"enableProjectHooks": true}`)
	os.WriteFile(filepath.Join(e.proj, ".claude", "settings.local.json"), []byte(`{"disableAllHooks": true}`), 0o644)
	os.WriteFile(filepath.Join(e.proj, ".claude", "settings.json"), []byte(`{"hooks": {"PreToolUse": 3}}`), 0o644)
	l = e.mustLoad(t, Overrides{})
	if !l.Settings.EnableProjectHooks || !l.Settings.DisableAllHooks {
		t.Errorf("local approval %v, disableAllHooks %v", l.Settings.EnableProjectHooks, l.Settings.DisableAllHooks)
	}
	if !strings.Contains(fmt.Sprint(l.Warnings), "were not read") {
		t.Errorf("a broken Claude Code hooks block is not reported: %v", l.Warnings)
	}
}
