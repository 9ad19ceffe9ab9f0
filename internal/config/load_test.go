package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cadre-dev/cadre/internal/permission"
)

// env is a fake environment for a test: a home and a project directory.
type env struct {
	home, proj string
	vars       map[string]string
	// untrusted loads as in a project the user has not trusted; the
	// merge tests trust theirs, since they test how layers combine.
	untrusted bool
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), vars: map[string]string{}}
	for _, d := range []string{e.home, e.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) path(scope string) string {
	switch scope {
	case ScopeUser:
		return filepath.Join(e.home, ".cadre", "settings.json")
	case ScopeProject:
		return filepath.Join(e.proj, ".cadre", "settings.json")
	case ScopeLocal:
		return filepath.Join(e.proj, ".cadre", "settings.local.json")
	}
	panic(scope)
}

func (e *env) write(t *testing.T, scope, content string) string {
	t.Helper()
	p := e.path(scope)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeLayers writes the user, project and local settings files; an empty
// content writes none.
func (e *env) writeLayers(t *testing.T, user, project, local string) {
	t.Helper()
	for scope, content := range map[string]string{ScopeUser: user, ScopeProject: project, ScopeLocal: local} {
		if content != "" {
			e.write(t, scope, content)
		}
	}
}

func (e *env) load(o Overrides) (*Loaded, error) {
	return Load(LoadOptions{Cwd: e.proj, UserHome: e.home, Getenv: func(k string) string { return e.vars[k] }, Overrides: o, Trusted: !e.untrusted})
}

func (e *env) mustLoad(t *testing.T, o Overrides) *Loaded {
	t.Helper()
	l, err := e.load(o)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

func intp(n int) *int { return &n }

func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		user, project, local string // "" = no file
		o                    Overrides
		want                 Settings
	}{
		{name: "no files", want: Settings{}},
		{name: "user only", user: `{"model":"u","maxTurns":3}`, want: Settings{Model: "u", MaxTurns: 3}},
		{name: "project beats user", user: `{"model":"u"}`, project: `{"model":"p"}`, want: Settings{Model: "p"}},
		{name: "local beats project", user: `{"model":"u"}`, project: `{"model":"p"}`, local: `{"model":"l"}`, want: Settings{Model: "l"}},
		{name: "flag beats local", local: `{"model":"l"}`, o: Overrides{Model: "f"}, want: Settings{Model: "f"}},
		{name: "unset keeps earlier", user: `{"model":"u","defaultProvider":"openai"}`, project: `{"maxTurns":7}`, want: Settings{Model: "u", DefaultProvider: "openai", MaxTurns: 7}},
		{name: "null keeps earlier", user: `{"model":"u"}`, project: `{"model":null}`, want: Settings{Model: "u"}},
		{name: "explicit zero replaces", user: `{"maxTurns":5}`, local: `{"maxTurns":0}`, want: Settings{MaxTurns: 0}},
		{name: "flag zero replaces", user: `{"maxTurns":5}`, o: Overrides{MaxTurns: intp(0)}, want: Settings{}},
		{name: "flag max turns", user: `{"maxTurns":5}`, o: Overrides{MaxTurns: intp(9)}, want: Settings{MaxTurns: 9}},
		{name: "mode later wins", user: `{"permissions":{"defaultMode":"plan"}}`, project: `{"permissions":{"defaultMode":"acceptEdits"}}`,
			want: Settings{Permissions: Permissions{DefaultMode: "acceptEdits"}}},
		{name: "mode flag", project: `{"permissions":{"defaultMode":"acceptEdits"}}`, o: Overrides{PermissionMode: "bypasspermissions"},
			want: Settings{Permissions: Permissions{DefaultMode: "bypassPermissions"}}},
		{name: "mode canonical", user: `{"permissions":{"defaultMode":"AcceptEdits"}}`, want: Settings{Permissions: Permissions{DefaultMode: "acceptEdits"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.writeLayers(t, tc.user, tc.project, tc.local)
			got := e.mustLoad(t, tc.o)
			if diff := cmp.Diff(tc.want, got.Settings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeUser, `{
		"aliases": {"sonnet": "anthropic:claude-sonnet-5-5", "fast": "openai:gpt-4o-mini"},
		"providers": {"openai": {"baseURL": "http://user", "apiKeyEnv": "U_KEY"}, "anthropic": {"apiKey": "k"}},
		"pricing": {"m1": {"input": 1, "output": 2}},
		"env": {"A": "1", "B": "1"},
		"permissions": {"allow": ["Read", "Bash(git diff:*)"], "deny": ["Bash(rm:*)"], "additionalDirectories": ["/a"],
			"task": {"*": "deny", "reviewer": "allow"}},
		"subagents": {"maxSpawnDepth": 2, "model": "haiku", "tools": {"deny": ["Bash"]}},
		"agents": {"a": {"description": "A1"}, "b": {"description": "B1", "tools": ["Read"]}}
	}`)
	e.write(t, ScopeProject, `{
		"aliases": {"fast": "openai:gpt-5-mini"},
		"pricing": {"m2": {"cacheRead": 0.5, "cacheWrite": 3.75}},
		"env": {"B": "2"},
		"permissions": {"allow": ["Edit", "Read", "Edit"], "ask": [" Bash(git push:*) "], "additionalDirectories": ["/b", "/a"],
			"task": {"reviewer": "deny"}},
		"subagents": {"surface": "OpenCode", "tools": {"deny": ["Bash", "WebFetch"], "allow": ["Read"]}}
	}`)
	e.write(t, ScopeLocal, `{"permissions": {"deny": ["Bash(rm:*)", "WebFetch"], "task": {"reviewer": "allow"}},
		"subagents": {"model": "opus"},
		"agents": {"a": {"description": "A2"}, "b": null, "c": {"description": "C"}}}`)
	got := e.mustLoad(t, Overrides{
		AllowedTools:    []string{"Bash(npm run test:*) Grep,Read", "Glob"},
		DisallowedTools: []string{"Write"},
		// Providers merge across the user's layers only: the file, then
		// --settings.
		Settings: `{"providers": {"openai": {"baseURL": "http://flag"}, "vllm": {"type": "openai", "baseURL": "http://gpu:8000/v1"}}}`,
	})
	want := Settings{
		Aliases: map[string]string{"sonnet": "anthropic:claude-sonnet-5-5", "fast": "openai:gpt-5-mini"},
		Providers: map[string]Provider{
			"openai":    {Type: "openai", BaseURL: "http://flag"}, // replaced whole
			"anthropic": {Type: "anthropic", APIKey: "k"},
			"vllm":      {Type: "openai", BaseURL: "http://gpu:8000/v1"},
		},
		Pricing: map[string]Price{"m1": {Input: 1, Output: 2}, "m2": {CacheRead: 0.5, CacheWrite: 3.75}},
		Env:     map[string]string{"A": "1", "B": "2"},
		Permissions: Permissions{
			Allow:                 []string{"Read", "Bash(git diff:*)", "Edit", "Bash(npm run test:*)", "Grep", "Glob"},
			Ask:                   []string{"Bash(git push:*)"},
			Deny:                  []string{"Bash(rm:*)", "WebFetch", "Write"},
			AdditionalDirectories: []string{"/a", "/b"},
			// Concatenated in layer order, repeats kept: the last rule wins.
			Task: taskRules("*", "deny", "reviewer", "allow", "reviewer", "deny", "reviewer", "allow"),
		},
		Subagents: Subagents{MaxSpawnDepth: 2, Surface: "opencode", Model: "opus",
			Tools: SubagentTools{Allow: []string{"Read"}, Deny: []string{"Bash", "WebFetch"}}},
		// Merged by name: a replaced whole, b kept (null is not set), c added.
		Agents: json.RawMessage(`{"a":{"description":"A2"},"b":{"description":"B1","tools":["Read"]},"c":{"description":"C"}}`),
	}
	if diff := cmp.Diff(want, got.Settings); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings: %v", got.Warnings)
	}
}

func TestLayers(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeProject, `{}`)
	got := e.mustLoad(t, Overrides{})
	want := []Layer{
		{Path: e.path(ScopeUser), Scope: ScopeUser, Personal: true},
		{Path: filepath.Join(e.proj, ".claude", "settings.json"), Scope: ScopeProject, Claude: true},
		{Path: e.path(ScopeProject), Scope: ScopeProject, Found: true},
		{Path: filepath.Join(e.proj, ".claude", "settings.local.json"), Scope: ScopeLocal, Claude: true, Personal: true},
		{Path: e.path(ScopeLocal), Scope: ScopeLocal, Personal: true},
		{Scope: ScopeFlags},
	}
	if diff := cmp.Diff(want, got.Layers); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	if got.Home != filepath.Join(e.home, ".cadre") {
		t.Errorf("Home = %q", got.Home)
	}
	got = e.mustLoad(t, Overrides{Model: "x"})
	if l := got.Layers[len(got.Layers)-1]; !l.Found {
		t.Errorf("flags layer %+v, want Found", l)
	}
}

func TestCadreHome(t *testing.T) {
	e := newEnv(t)
	custom := filepath.Join(filepath.Dir(e.home), "custom")
	for _, tc := range []struct {
		env, want string
	}{
		{"", filepath.Join(e.home, ".cadre")},
		{custom, custom},
		{"~/cfg", filepath.Join(e.home, "cfg")},
		{"rel/dir", filepath.Join(e.proj, "rel", "dir")},
	} {
		e.vars["CADRE_HOME"] = tc.env
		got := e.mustLoad(t, Overrides{})
		if got.Home != tc.want || got.Layers[0].Path != filepath.Join(tc.want, "settings.json") {
			t.Errorf("CADRE_HOME=%q: Home %q, user file %q; want %q", tc.env, got.Home, got.Layers[0].Path, tc.want)
		}
	}

	// The user layer is read from CADRE_HOME, not ~/.cadre.
	e.write(t, ScopeUser, `{"model":"from-home"}`)
	if err := os.MkdirAll(custom, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(custom, "settings.json"), []byte(`{"model":"from-custom"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.vars["CADRE_HOME"] = custom
	if got := e.mustLoad(t, Overrides{}); got.Settings.Model != "from-custom" || !got.Layers[0].Found {
		t.Errorf("with CADRE_HOME: model %q, layer %+v", got.Settings.Model, got.Layers[0])
	}
}

func TestProjectIsUserFile(t *testing.T) {
	// Run from the home directory, project and user file are one file.
	e := newEnv(t)
	e.proj = e.home
	e.write(t, ScopeUser, `{"permissions":{"allow":["Read"]},"model":"m"}`)
	got := e.mustLoad(t, Overrides{})
	if got.Layers[0].Found != true || got.Layers[1].Found != false {
		t.Errorf("layers %+v, want only the user layer found", got.Layers)
	}
	if diff := cmp.Diff([]string{"Read"}, got.Settings.Permissions.Allow); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
}

func TestEmptyAndBOM(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeUser, " \n\t")
	e.write(t, ScopeProject, "\xef\xbb\xbf{\"model\":\"m\"}")
	got := e.mustLoad(t, Overrides{})
	if got.Settings.Model != "m" || !got.Layers[0].Found {
		t.Errorf("got %+v, layers %+v", got.Settings, got.Layers)
	}
}

func TestUnknownKeys(t *testing.T) {
	e := newEnv(t)
	user := e.write(t, ScopeUser, `{"modle": "x", "theme": "dark", "permissions": {"alow": ["Read"], "allow": ["Edit"]}}`)
	proj := e.write(t, ScopeProject, `{
		"providers": {"openai": {"baseUrl": "http://x", "organization": "o"}},
		"pricing": {"m": {"inputt": 1}},
		"subagents": {"anything": {"goes": 1}, "maxConcurent": 4, "tools": {"alow": ["Read"]}},
		"agents": {"whatever": true}
	}`)
	e.write(t, ScopeLocal, `{"permissions": {"task": {"weird key?": "deny", "review-*": "ask", "allow": "deny"}}}`)
	got := e.mustLoad(t, Overrides{})
	var strs []string
	for _, w := range got.Warnings {
		strs = append(strs, w.String())
	}
	want := []string{
		user + `: modle: unknown key, ignored (did you mean "model"?)`,
		user + `: permissions.alow: unknown key, ignored (did you mean "allow"?)`,
		user + `: theme: unknown key, ignored`,
		proj + `: pricing.m.inputt: unknown key, ignored (did you mean "input"?)`,
		proj + `: providers.openai.baseUrl: unknown key, ignored (did you mean "baseURL"?)`,
		proj + `: subagents.anything: unknown key, ignored`,
		proj + `: subagents.maxConcurent: unknown key, ignored (did you mean "maxConcurrent"?)`,
		proj + `: subagents.tools.alow: unknown key, ignored (did you mean "allow"?)`,
		proj + `: providers: ignored in a project's files, trusted or not: provider profiles (endpoints, keys, headers) come only from your user settings ($CADRE_HOME/settings.json), --settings or the environment`,
		// Task rule keys are agent patterns, never unknown keys.
	}
	if diff := cmp.Diff(want, strs); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// Known keys beside unknown ones still apply.
	if diff := cmp.Diff([]string{"Edit"}, got.Settings.Permissions.Allow); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
	wantTask := taskRules("weird key?", "deny", "review-*", "ask", "allow", "deny")
	if diff := cmp.Diff(wantTask, got.Settings.Permissions.Task); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	if got.Settings.Model != "" {
		t.Errorf("a misspelt key took effect: model %q", got.Settings.Model)
	}
}

func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    string // after "<file>"
	}{
		{"syntax", "{\n  \"model\": \"x\",\n}", `:3:1: invalid JSON: invalid character '}' looking for beginning of object key string`},
		{"syntax col", "{\"model\" \"x\"}", `:1:10: invalid JSON: invalid character '"' after object key`},
		{"truncated", "{\"model\": ", `:1:10: invalid JSON: unexpected EOF`},
		{"trailing", "{}\n{}", `:2:1: invalid JSON: unexpected data after the top-level object`},
		{"array", `["model"]`, `: want a JSON object at the top level, got array`},
		{"maxTurns string", `{"maxTurns": "ten"}`, `: maxTurns: want a number, got string`},
		{"maxTurns fraction", `{"maxTurns": 2.5}`, `: maxTurns: want a whole number, got 2.5`},
		{"maxTurns negative", `{"maxTurns": -1}`, `: maxTurns: want 0 (no limit) or more, got -1`},
		{"model number", `{"model": 4}`, `: model: want a string, got number`},
		{"aliases array", `{"aliases": ["a"]}`, `: aliases: want an object, got array`},
		{"aliases value", `{"aliases": {"fast": true}}`, `: aliases.fast: want a string, got boolean`},
		{"env value", `{"env": {"X": 1}}`, `: env.X: want a string, got number`},
		{"permissions type", `{"permissions": "all"}`, `: permissions: want an object, got string`},
		{"allow type", `{"permissions": {"allow": "Read"}}`, `: permissions.allow: want an array, got string`},
		{"allow element", `{"permissions": {"allow": ["Read", 3]}}`, `: permissions.allow[1]: want a string, got number`},
		{"mode", `{"permissions": {"defaultMode": "yolo"}}`, `: permissions.defaultMode: unknown permission mode "yolo": want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions`},
		{"mode empty", `{"permissions": {"defaultMode": ""}}`, `: permissions.defaultMode: empty permission mode: want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions`},
		{"rule", `{"permissions": {"allow": ["Read", "Edit", "Bash(git diff"]}}`, `: permissions.allow[2]: permission rule "Bash(git diff": unbalanced parentheses: want Tool(specifier)`},
		{"deny rule", `{"permissions": {"deny": [""]}}`, `: permissions.deny[0]: empty permission rule`},
		{"ask rule", `{"permissions": {"ask": ["Read, Edit"]}}`, `: permissions.ask[0]: permission rule "Read, Edit": bad tool name "Read, Edit": a tool name holds only letters, digits, _ - . and * (one rule per entry)`},
		{"provider type", `{"providers": {"x": {"type": "gemini"}}}`, `: providers.x.type: want "anthropic" or "openai", got "gemini"`},
		{"provider known key wrong type", `{"providers": {"openai": {"type": "anthropic", "baseURL": 1}}}`, `: providers.openai.baseURL: want a string, got number`},
		{"custom provider no type", `{"providers": {"vllm": {"baseURL": "http://x"}}}`, `: providers.vllm.type: missing: a custom provider needs "type": "anthropic" or "openai"`},
		{"provider not object", `{"providers": {"openai": "http://x"}}`, `: providers.openai: want an object, got string`},
		{"provider name", `{"providers": {"acct:b": {"type": "openai"}}}`, `: providers.acct:b: a provider name is letters, digits, '.', '_' and '-', starting with a letter or digit (it is the prefix of name:model), got "acct:b"`},
		{"provider reserved", `{"providers": {"script": {"type": "openai"}}}`, `: providers.script: "script" is reserved (it names the scripted model), choose another name`},
		{"provider apiKeyEnv", `{"providers": {"acct": {"type": "openai", "apiKeyEnv": "$B_KEY"}}}`, `: providers.acct.apiKeyEnv: want the name of an environment variable (letters, digits and '_', not starting with a digit), got "$B_KEY"`},
		{"provider baseURL", `{"providers": {"acct": {"type": "openai", "baseURL": "gateway:8000"}}}`, `: providers.acct.baseURL: want an http(s) URL such as https://gateway.example/v1, got "gateway:8000"`},
		{"provider baseURL credentials", `{"providers": {"acct": {"type": "openai", "baseURL": "https://me:sk-secret@gw.example"}}}`, `: providers.acct.baseURL: the URL holds a user name or password: put the key in the environment and name it with apiKeyEnv`},
		{"provider header name", `{"providers": {"acct": {"type": "openai", "headers": {"X Route": "a"}}}}`, `: providers.acct.headers: "X Route" is not a valid HTTP header name`},
		{"provider key header", `{"providers": {"acct": {"type": "anthropic", "headers": {"X-Api-Key": "sk"}}}}`, `: providers.acct.headers.X-Api-Key: the key is not a header: export it and name the variable with apiKeyEnv (cadre sends it as the provider expects)`},
		{"provider header value", `{"providers": {"acct": {"type": "openai", "headers": {"X-Route": "a\r\nHost: evil"}}}}`, `: providers.acct.headers.X-Route: the value holds a line break or control character`},
		{"provider header type", `{"providers": {"acct": {"type": "openai", "headers": {"X-Route": 1}}}}`, `: providers.acct.headers.X-Route: want a string, got number`},
		{"provider organization", `{"providers": {"acct": {"type": "anthropic", "organization": "org-1"}}}`, `: providers.acct.organization: only an openai provider has an organization; for a gateway's own header use headers`},
		{"price", `{"pricing": {"m": {"input": 1, "output": -2}}}`, `: pricing.m.output: want a price of 0 or more (USD per million tokens), got -2`},
		{"price type", `{"pricing": {"m": {"cacheRead": "1"}}}`, `: pricing.m.cacheRead: want a number, got string`},
		{"task action", `{"permissions": {"task": {"*": "deny", "reviewer": "nope"}}}`, `: permissions.task.reviewer: want "allow", "ask" or "deny", got "nope"`},
		{"task value type", `{"permissions": {"task": {"reviewer": 1}}}`, `: permissions.task.reviewer: want "allow", "ask" or "deny", got a number`},
		{"task empty pattern", `{"permissions": {"task": {"": "deny"}}}`, `: permissions.task: empty agent pattern: use "*" for every agent`},
		{"task bare action", `{"permissions": {"task": "never"}}`, `: permissions.task: task rules: want "allow", "ask" or "deny", got "never"`},
		{"task type", `{"permissions": {"task": ["reviewer"]}}`, `: permissions.task: task rules: want an object of agent pattern to "allow", "ask" or "deny" (or one action for every agent), got an array`},
		{"subagents type", `{"subagents": true}`, `: subagents: want an object, got boolean`},
		{"depth over cap", `{"subagents": {"maxSpawnDepth": 4}}`, `: subagents.maxSpawnDepth: want 1 to 3, got 4: the hard cap is 3`},
		{"depth negative", `{"subagents": {"maxSpawnDepth": -1}}`, `: subagents.maxSpawnDepth: want 1 to 3 (0 means 1: subagents are leaves), got -1`},
		{"depth type", `{"subagents": {"maxSpawnDepth": "2"}}`, `: subagents.maxSpawnDepth: want a number, got string`},
		{"surface", `{"subagents": {"surface": "cursor"}}`, `: subagents.surface: want one of claude, opencode, harness, gateway, got "cursor"`},
		{"subagent model type", `{"subagents": {"model": 3}}`, `: subagents.model: want a string, got number`},
		{"subagent tools type", `{"subagents": {"tools": ["Read"]}}`, `: subagents.tools: want an object, got array`},
		{"subagent tool empty", `{"subagents": {"tools": {"deny": ["Bash", " "]}}}`, `: subagents.tools.deny[1]: empty tool name`},
		{"subagent tool rule", `{"subagents": {"tools": {"allow": ["Bash(git:*)"]}}}`, `: subagents.tools.allow[0]: want a tool name such as "Bash" or "mcp__github__*", got "Bash(git:*)" (specifiers belong in permissions rules)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			file := e.write(t, ScopeProject, tc.content)
			_, err := e.load(Overrides{})
			if err == nil {
				t.Fatal("no error")
			}
			if got, want := err.Error(), file+tc.want; got != want {
				t.Errorf("error\n got %s\nwant %s", got, want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != file {
				t.Errorf("error %T does not name the file", err)
			}
		})
	}
}

func TestUnreadable(t *testing.T) {
	e := newEnv(t)
	// A directory where the file should be cannot be read, even by root.
	if err := os.MkdirAll(e.path(ScopeLocal), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := e.load(Overrides{})
	if err == nil || !strings.HasPrefix(err.Error(), e.path(ScopeLocal)+": cannot read: ") {
		t.Fatalf("got %v, want a read error naming the file", err)
	}
}

func TestInvalidFlags(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{MaxTurns: intp(-3)}, "flags: --max-turns: want 0 (no limit) or more, got -3"},
		{Overrides{PermissionMode: "autopilot"}, `flags: --permission-mode: unknown permission mode "autopilot": want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions`},
		{Overrides{AllowedTools: []string{"Read", "Bash(git diff:*"}}, `flags: --allowedTools: permission rule list "Bash(git diff:*": unbalanced parentheses: a ( is never closed`},
		{Overrides{DisallowedTools: []string{"Ba$h"}}, `flags: --disallowedTools: permission rule "Ba$h": bad tool name "Ba$h": a tool name holds only letters, digits, _ - . and * (one rule per entry)`},
	} {
		_, err := newEnv(t).load(tc.o)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: got %v, want %s", tc.o, err, tc.want)
		}
	}
}

func TestRulesAndMode(t *testing.T) {
	s := Settings{Permissions: Permissions{
		Allow: []string{"Read", "Bash(git diff:*)"},
		Ask:   []string{"Bash(git push:*)"},
		Deny:  []string{"Edit(docs/**)"},
	}}
	got, err := s.Rules()
	if err != nil {
		t.Fatal(err)
	}
	want := permission.Rules{
		Allow: []permission.Rule{{Tool: "Read"}, {Tool: "Bash", Specifier: "git diff:*"}},
		Ask:   []permission.Rule{{Tool: "Bash", Specifier: "git push:*"}},
		Deny:  []permission.Rule{{Tool: "Edit", Specifier: "docs/**"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rules (-want +got):\n%s", diff)
	}
	s.Permissions.Ask = append(s.Permissions.Ask, "x", "Bash(")
	if _, err := s.Rules(); err == nil || !strings.HasPrefix(err.Error(), "permissions.ask[2]: ") {
		t.Errorf("bad rule: %v, want it to name permissions.ask[2]", err)
	}

	if m, err := (Settings{}).Mode(); err != nil || m != permission.ModeDefault {
		t.Errorf("empty mode: %q, %v", m, err)
	}
	s.Permissions.DefaultMode = "plan"
	if m, err := s.Mode(); err != nil || m != permission.ModePlan {
		t.Errorf("plan: %q, %v", m, err)
	}
	s.Permissions.DefaultMode = "nope"
	if _, err := s.Mode(); err == nil || !strings.HasPrefix(err.Error(), "permissions.defaultMode: ") {
		t.Errorf("bad mode: %v", err)
	}
}

// TestEveryField decodes a file that sets every field, so a field of a
// kind the walker cannot read, or without a json tag, fails here.
func TestEveryField(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeUser, `{
		"model": "sonnet", "defaultProvider": "anthropic",
		"aliases": {"sonnet": "anthropic:claude-sonnet-5-5"},
		"providers": {"anthropic": {"type": "anthropic", "baseURL": "https://u.example", "apiKey": "k", "apiKeyEnv": "E", "headers": {"X-Route": "r"}},
			"acct": {"type": "openai", "organization": "org-1"}},
		"pricing": {"m": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
		"permissions": {"allow": ["Read"], "ask": ["Bash"], "deny": ["Write"], "defaultMode": "plan", "additionalDirectories": ["/x"],
			"task": {"*": "ask", "explore": "allow"}},
		"maxTurns": 12,
		"env": {"K": "V"},
		"subagents": {"maxSpawnDepth": 3, "surface": "harness", "model": "haiku", "tools": {"allow": ["Read", "Grep"], "deny": ["Bash"]},
			"maxConcurrent": 3, "maxChildrenPerAgent": 5, "runTimeoutSeconds": 60, "archiveAfterMinutes": 30, "cleanup": "delete", "announce": "summarize"},
		"agents": {"a": {}}
	}`)
	got := e.mustLoad(t, Overrides{})
	want := Settings{
		Model: "sonnet", DefaultProvider: "anthropic",
		Aliases: map[string]string{"sonnet": "anthropic:claude-sonnet-5-5"},
		Providers: map[string]Provider{"anthropic": {Type: "anthropic", BaseURL: "https://u.example", APIKey: "k", APIKeyEnv: "E", Headers: map[string]string{"X-Route": "r"}},
			"acct": {Type: "openai", Organization: "org-1"}},
		Pricing: map[string]Price{"m": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		Permissions: Permissions{Allow: []string{"Read"}, Ask: []string{"Bash"}, Deny: []string{"Write"},
			DefaultMode: "plan", AdditionalDirectories: []string{"/x"},
			Task: taskRules("*", "ask", "explore", "allow")},
		MaxTurns: 12,
		Env:      map[string]string{"K": "V"},
		Subagents: Subagents{MaxSpawnDepth: 3, Surface: "harness", Model: "haiku",
			Tools:         SubagentTools{Allow: []string{"Read", "Grep"}, Deny: []string{"Bash"}},
			MaxConcurrent: 3, MaxChildrenPerAgent: 5, RunTimeoutSeconds: 60, ArchiveAfterMinutes: 30, Cleanup: "delete", Announce: "summarize"},
		Agents: json.RawMessage(`{"a":{}}`),
	}
	if diff := cmp.Diff(want, got.Settings); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings: %v", got.Warnings)
	}
}

// A repository's committed settings may not put every session in it in
// bypassPermissions: that would let cloning a hostile repository switch
// every guard off. The personal layers and the flag still can.
func TestProjectFileCannotGrantBypass(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		user, project, local string
		o                    Overrides
		want                 string // the mode that results
		warn                 bool
	}{
		{name: "project refused", project: `{"permissions":{"defaultMode":"bypassPermissions"}}`, want: "", warn: true},
		{name: "project refused keeps user mode", user: `{"permissions":{"defaultMode":"acceptEdits"}}`,
			project: `{"permissions":{"defaultMode":"bypassPermissions"}}`, want: "acceptEdits", warn: true},
		{name: "user allowed", user: `{"permissions":{"defaultMode":"bypassPermissions"}}`, want: "bypassPermissions"},
		{name: "local allowed", local: `{"permissions":{"defaultMode":"bypassPermissions"}}`, want: "bypassPermissions"},
		{name: "flag allowed", project: `{"permissions":{"defaultMode":"bypassPermissions"}}`,
			o: Overrides{PermissionMode: "bypassPermissions"}, want: "bypassPermissions", warn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.writeLayers(t, tc.user, tc.project, tc.local)
			got := e.mustLoad(t, tc.o)
			if got.Settings.Permissions.DefaultMode != tc.want {
				t.Errorf("mode = %q, want %q", got.Settings.Permissions.DefaultMode, tc.want)
			}
			var warned bool
			for _, w := range got.Warnings {
				if w.Key == "permissions.defaultMode" && strings.Contains(w.Message, "bypassPermissions") {
					warned = true
				}
			}
			if warned != tc.warn {
				t.Errorf("warned = %v, want %v (warnings %v)", warned, tc.warn, got.Warnings)
			}
		})
	}
}
