package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/permission"
)

func TestTaskRulesKeepFileOrder(t *testing.T) {
	e := newEnv(t)
	// A generic decode sorts keys; the rules must keep the file's order,
	// including past escapes, nesting and a duplicated key.
	e.write(t, ScopeProject, `{
		"permissions": {"task": {"zeta": "deny"}},
		"model": "m",
		"permissions": {
			"allow": ["Read"],
			"task": {"zeta": "deny", "m\u002a": "ask", "alpha": "allow", "*": "deny", "alpha": "allow"},
			"deny": ["Write"]
		}
	}`)
	got := e.mustLoad(t, Overrides{})
	want := taskRules("zeta", "deny", "m*", "ask", "alpha", "allow", "*", "deny", "alpha", "allow")
	if diff := cmp.Diff(want, got.Settings.Permissions.Task); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	if a, _ := got.Settings.Permissions.Task.Evaluate("alpha"); a != permission.ActionAllow {
		t.Errorf("alpha: %s, want allow (its rule comes after \"*\")", a)
	}
}

func TestTaskRulesLayerOrder(t *testing.T) {
	// Each layer's rules come after the earlier layers', repeats kept: a
	// deduplicating merge would keep deny, allow and let allow win.
	e := newEnv(t)
	e.write(t, ScopeUser, `{"permissions": {"task": {"x": "deny"}}}`)
	e.write(t, ScopeProject, `{"permissions": {"task": {"x": "allow"}}}`)
	e.write(t, ScopeLocal, `{"permissions": {"task": "deny"}}`)
	got := e.mustLoad(t, Overrides{}).Settings.Permissions.Task
	want := taskRules("x", "deny", "x", "allow", "*", "deny")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	if !got.RemovesTool() {
		t.Error("the local layer's bare deny should remove the tool")
	}

	e.write(t, ScopeLocal, `{"permissions": {"task": {"x": "deny"}}}`)
	got = e.mustLoad(t, Overrides{}).Settings.Permissions.Task
	if a, _ := got.Evaluate("x"); a != permission.ActionDeny {
		t.Errorf("x: %s, want the local layer's deny", a)
	}
}

func TestSubagentsMerge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		user, project string
		want          Subagents
	}{
		{name: "later scalar wins", user: `{"maxSpawnDepth": 3, "surface": "claude", "model": "a"}`, project: `{"maxSpawnDepth": 2, "model": "b"}`,
			want: Subagents{MaxSpawnDepth: 2, Surface: "claude", Model: "b"}},
		{name: "explicit zero replaces", user: `{"maxSpawnDepth": 3}`, project: `{"maxSpawnDepth": 0}`, want: Subagents{}},
		{name: "null keeps", user: `{"model": "a"}`, project: `{"model": null, "tools": null}`, want: Subagents{Model: "a"}},
		{name: "tool lists concatenate", user: `{"tools": {"allow": ["Read", "Grep"], "deny": ["Bash"]}}`,
			project: `{"tools": {"allow": ["Grep", "Glob"], "deny": ["Bash", "mcp__*"]}}`,
			want:    Subagents{Tools: SubagentTools{Allow: []string{"Read", "Grep", "Glob"}, Deny: []string{"Bash", "mcp__*"}}}},
		{name: "surface canonical", project: `{"surface": " Gateway"}`, want: Subagents{Surface: "gateway"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.user != "" {
				e.write(t, ScopeUser, `{"subagents": `+tc.user+`}`)
			}
			e.write(t, ScopeProject, `{"subagents": `+tc.project+`}`)
			got := e.mustLoad(t, Overrides{})
			if diff := cmp.Diff(tc.want, got.Settings.Subagents); diff != "" {
				t.Errorf("subagents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubagentsHelpers(t *testing.T) {
	for depth, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 3} {
		if got := (Subagents{MaxSpawnDepth: depth}).Depth(); got != want {
			t.Errorf("Depth(%d) = %d, want %d", depth, got, want)
		}
	}
	if got := (Subagents{}).Profile(); got != SurfaceClaude {
		t.Errorf("default profile %q", got)
	}
	if got := (Subagents{Surface: SurfaceOpenCode}).Profile(); got != SurfaceOpenCode {
		t.Errorf("profile %q", got)
	}

	for _, tc := range []struct {
		tools SubagentTools
		name  string
		want  bool
	}{
		{SubagentTools{}, "Bash", true},
		{SubagentTools{Deny: []string{"Bash"}}, "Bash", false},
		{SubagentTools{Deny: []string{"Bash"}}, "Read", true},
		{SubagentTools{Allow: []string{"Read", "Grep"}}, "Read", true},
		{SubagentTools{Allow: []string{"Read", "Grep"}}, "Bash", false},                 // allow-only
		{SubagentTools{Allow: []string{"Bash"}, Deny: []string{"Bash"}}, "Bash", false}, // deny wins
		{SubagentTools{Allow: []string{"mcp__github__*"}}, "mcp__github__issue", true},
		{SubagentTools{Deny: []string{"mcp__*"}}, "mcp__db__query", false},
		{SubagentTools{Deny: []string{"bash"}}, "Bash", true}, // tool names are exact
	} {
		if got := tc.tools.Allows(tc.name); got != tc.want {
			t.Errorf("%+v.Allows(%q) = %v, want %v", tc.tools, tc.name, got, tc.want)
		}
	}
}

func TestAgentsMergeByName(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		user, project, local string
		want                 string
	}{
		{name: "one layer", user: `{"a": {"x": 1}}`, want: `{"a":{"x":1}}`},
		{name: "later entry replaces whole", user: `{"a": {"x": 1, "y": 2}}`, project: `{"a": {"x": 3}}`, want: `{"a":{"x":3}}`},
		{name: "other names kept", user: `{"a": {"x": 1}}`, project: `{"b": {}}`, local: `{"c": {}}`, want: `{"a":{"x":1},"b":{},"c":{}}`},
		{name: "null entry keeps", user: `{"a": {"x": 1}}`, project: `{"a": null}`, want: `{"a":{"x":1}}`},
		{name: "empty object keeps", user: `{"a": {}}`, project: `{}`, want: `{"a":{}}`},
		{name: "not an object replaces", user: `{"a": {}}`, project: `[{"name": "b"}]`, want: `[{"name":"b"}]`},
		{name: "object after non-object", user: `[1]`, project: `{"a": {}}`, want: `{"a":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for scope, v := range map[string]string{ScopeUser: tc.user, ScopeProject: tc.project, ScopeLocal: tc.local} {
				if v != "" {
					e.write(t, scope, `{"agents": `+v+`}`)
				}
			}
			got := e.mustLoad(t, Overrides{}).Settings.Agents
			if diff := cmp.Diff(json.RawMessage(tc.want), got); diff != "" {
				t.Errorf("agents (-want +got):\n%s", diff)
			}
		})
	}
}

// taskRules builds rules from pattern, action pairs.
func taskRules(pairs ...string) permission.TaskRules {
	out := permission.TaskRules{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, permission.TaskRule{Pattern: pairs[i], Action: permission.Action(pairs[i+1])})
	}
	return out
}

func TestSubagentLimitsValidated(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"subagents": {"maxConcurrent": -1}}`, "subagents.maxConcurrent: want 0 or more"},
		{`{"subagents": {"runTimeoutSeconds": -5}}`, "subagents.runTimeoutSeconds: want 0 or more"},
		{`{"subagents": {"cleanup": "purge"}}`, `subagents.cleanup: want keep or delete, got "purge"`},
		{`{"subagents": {"announce": "shout"}}`, `subagents.announce: want raw or summarize, got "shout"`},
		{`{"subagents": {"maxForegroundConcurrent": -2}}`, "subagents.maxForegroundConcurrent: want 0 or more (0 means the default, 16), got -2"},
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".cadre"), 0o755)
		os.WriteFile(filepath.Join(dir, ".cadre", "settings.json"), []byte(tc.json), 0o644)
		_, err := Load(LoadOptions{Cwd: dir, Getenv: func(string) string { return "" }, UserHome: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.json, err, tc.want)
		}
	}
	if (Subagents{}).Lane() != 8 || (Subagents{MaxConcurrent: 3}).Lane() != 3 || (Subagents{}).ArchiveAfter() != 60 {
		t.Error("defaults")
	}
	if (Subagents{}).ForegroundLimit() != 16 || (Subagents{MaxForegroundConcurrent: 2}).ForegroundLimit() != 2 {
		t.Error("maxForegroundConcurrent: want 16 by default, else the setting")
	}
}

// TestSP1AllowAgentsSetting: subagents.allowAgents is a known key whose
// layers concatenate, as the other lists do, without a warning.
func TestSP1AllowAgentsSetting(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeUser, `{"subagents": {"allowAgents": ["reviewer"]}}`)
	e.write(t, ScopeLocal, `{"subagents": {"allowAgents": ["tester", "reviewer"]}}`)
	got := e.mustLoad(t, Overrides{})
	if d := cmp.Diff([]string{"reviewer", "tester"}, got.Settings.Subagents.AllowAgents); d != "" {
		t.Errorf("allowAgents (-want +got):\n%s", d)
	}
	for _, w := range got.Warnings {
		if strings.Contains(w.Key, "allowAgents") {
			t.Errorf("warning: %s", w)
		}
	}
}
