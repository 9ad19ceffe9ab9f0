package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cadre-dev/cadre/internal/hook"
)

// HookLayer is the hooks block of one settings file.
type HookLayer struct {
	Scope, Path string
	Hooks       hook.Settings
}

// dropHookApproval removes enableProjectHooks from the project's shared
// settings: a repository that could approve its own hooks would run any
// command it likes on clone.
func dropHookApproval(path string, layer *Settings, generic map[string]any) []Warning {
	if _, ok := generic["enableProjectHooks"]; !ok {
		return nil
	}
	delete(generic, "enableProjectHooks")
	layer.EnableProjectHooks = false
	return []Warning{{File: path, Key: "enableProjectHooks",
		Message: "ignored in a project's shared settings: trusting the workspace (cadre trust) allows its hooks"}}
}

// claudeHooks reads the hooks of Claude Code's settings files, so that a
// repository set up for Claude Code keeps its hooks: ~/.claude/settings.json
// (user), .claude/settings.json (project) and .claude/settings.local.json
// (local). Only "hooks" and "disableAllHooks" are read there; the other
// keys are Claude Code's business. A file that cannot be read is a
// warning, not an error: it belongs to another program. sources, when not
// nil, names the scopes to read (--setting-sources).
func claudeHooks(out *Loaded, merged *Settings, userHome, cwd string, sources []string) []Warning {
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	// The project's Claude Code files are whole layers (see Load).
	var files []HookLayer
	if userHome != "" {
		files = append(files, HookLayer{Scope: ScopeUser, Path: filepath.Join(userHome, ".claude", "settings.json")})
	}
	var warnings []Warning
	seen := map[string]bool{}
	for _, l := range files {
		if sources != nil && !slices.Contains(sources, l.Scope) {
			continue
		}
		if seen[filepath.Clean(l.Path)] || filepath.Clean(l.Path) == filepath.Join(cwd, ".claude", "settings.json") {
			continue // run from the home directory: one file, read once
		}
		seen[filepath.Clean(l.Path)] = true
		data, err := os.ReadFile(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var v struct {
			Hooks           json.RawMessage `json:"hooks"`
			DisableAllHooks bool            `json:"disableAllHooks"`
		}
		if err == nil {
			err = json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &v)
		}
		if err == nil {
			merged.DisableAllHooks = merged.DisableAllHooks || v.DisableAllHooks
			if len(v.Hooks) > 0 && string(v.Hooks) != "null" {
				l.Hooks, err = hook.ParseSettings(v.Hooks)
			}
		}
		if err != nil {
			warnings = append(warnings, Warning{File: l.Path, Key: "hooks", Message: fmt.Sprintf("Claude Code's hooks here were not read: %v", err)})
			continue
		}
		if len(l.Hooks) > 0 {
			out.Hooks = append(out.Hooks, l)
		}
	}
	return warnings
}
