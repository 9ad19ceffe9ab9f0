package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/trust"
)

// Scopes of the layers, in the order they apply.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
	ScopeLocal   = "local"
	ScopeFlags   = "flags"
)

// LoadOptions say where to look.
type LoadOptions struct {
	// Cwd is the project directory; empty means the process's.
	Cwd string
	// Getenv reads CADRE_HOME; nil means os.Getenv.
	Getenv func(string) string
	// UserHome is the user's home directory; empty means os.UserHomeDir.
	UserHome string
	// Sources are the file layers to read, among ScopeUser, ScopeProject
	// and ScopeLocal (--setting-sources); nil reads all three.
	Sources   []string
	Overrides Overrides
	// Trusted says the user trusts the project (package trust): its
	// shared settings apply in full, and its hooks and MCP servers run.
	// Untrusted, they may only narrow (see narrow).
	Trusted bool
}

// DefaultModel is the main agent's model when no flag and no settings
// layer names one: Claude Code's Sonnet alias, which the built-in aliases
// resolve to anthropic:claude-sonnet-5-5 (docs/models.md). The runtime
// applies it; Load leaves Settings.Model as the layers say.
const DefaultModel = "sonnet"

// Layer is one source of settings.
type Layer struct {
	Path  string // the file; empty for flags
	Scope string // ScopeUser, ScopeProject, ScopeLocal or ScopeFlags
	Found bool   // the file exists (for flags: some flag was given)
	// Claude is set for Claude Code's files (.claude/settings*.json).
	Claude bool
	// Personal is set for the user's own files: the user settings, and a
	// settings.local.json that git does not track and that is a regular
	// file. Every other file is the project's, read as its shared
	// settings whatever its name.
	Personal bool
}

// Warning is a problem that does not stop loading, such as an unknown key.
type Warning struct {
	File, Key, Message string
}

func (w Warning) String() string { return w.File + ": " + w.Key + ": " + w.Message }

// Error is an invalid settings file or flag: where, which key, what was
// wrong. Line and Col are set for JSON syntax errors.
type Error struct {
	File      string
	Line, Col int
	Key       string // a path such as "permissions.allow[2]"; empty for the whole file
	Msg       string
	Err       error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Loaded is the result of Load.
type Loaded struct {
	Settings Settings
	Layers   []Layer
	Warnings []Warning
	// Personal is the merge of the user's own layers only (Layer.Personal,
	// and --settings): for a setting only the user may widen, read it here
	// rather than from Settings, which the project's layers reach.
	Personal Settings
	// Trusted is LoadOptions.Trusted.
	Trusted bool
	// Asks are what the project's shared layers and .mcp.json ask for
	// that would widen what runs: skipped unless Trusted (package trust).
	Asks []trust.Item
	// Home is the resolved CADRE_HOME.
	Home string
	// MCP holds each layer's mcpServers, in layer order.
	MCP []MCPLayer
	// Hooks holds each layer's hooks, in layer order: cadre's settings
	// files, then Claude Code's (see claudeHooks).
	Hooks []HookLayer
}

// Load reads and merges the settings layers.
func Load(opts LoadOptions) (*Loaded, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("settings: find the working directory: %w", err)
		}
		cwd = wd
	}
	home, err := cadreHome(getenv("CADRE_HOME"), opts.UserHome, cwd)
	if err != nil {
		return nil, err
	}

	out := &Loaded{Home: home, Trusted: opts.Trusted}
	// Claude Code's project files sit below cadre's own of the same scope:
	// a project set up for both says what cadre should do in .cadre.
	files := []Layer{
		{Path: filepath.Join(home, "settings.json"), Scope: ScopeUser},
		{Path: filepath.Join(cwd, ".claude", "settings.json"), Scope: ScopeProject, Claude: true},
		{Path: filepath.Join(cwd, ".cadre", "settings.json"), Scope: ScopeProject},
		{Path: filepath.Join(cwd, ".claude", "settings.local.json"), Scope: ScopeLocal, Claude: true},
		{Path: filepath.Join(cwd, ".cadre", "settings.local.json"), Scope: ScopeLocal},
	}
	for _, src := range opts.Sources {
		switch src {
		case ScopeUser, ScopeProject, ScopeLocal:
		default:
			return nil, &Error{File: ScopeFlags, Key: "--setting-sources", Msg: fmt.Sprintf("unknown source %q: want user, project or local", src)}
		}
	}
	var merged, personal Settings
	for _, l := range files {
		if opts.Sources != nil && !slices.Contains(opts.Sources, l.Scope) {
			continue
		}
		// Run from the home directory, the project file is the user file:
		// read it once.
		if l.Scope == ScopeProject && filepath.Clean(l.Path) == filepath.Clean(files[0].Path) {
			out.Layers = append(out.Layers, l)
			continue
		}
		l.Personal = l.Scope == ScopeUser
		if l.Scope == ScopeLocal {
			// A local file is the user's only when it is theirs: not
			// committed, not a link out of the project.
			ok, why := personalLocal(cwd, l.Path)
			l.Personal = ok
			if !ok {
				out.Warnings = append(out.Warnings, Warning{File: l.Path, Message: "read as the project's shared settings, not yours: it " + why})
			}
		}
		layer, generic, warnings, found, err := readFile(l.Path)
		if l.Claude {
			// Claude Code's file: its keys cadre does not know are Claude
			// Code's business, and a file cadre cannot read is a warning.
			warnings = nil
			if err != nil {
				out.Warnings = append(out.Warnings, Warning{File: l.Path, Message: fmt.Sprintf("Claude Code's settings here were not read: %v", err)})
				continue
			}
		} else if err != nil {
			return nil, err
		}
		l.Found = found
		out.Layers = append(out.Layers, l)
		out.Warnings = append(out.Warnings, warnings...)
		if l.Scope != ScopeUser {
			// Even a personal local file: it lies in the working tree,
			// where what runs there can write it.
			out.Warnings = append(out.Warnings, dropProjectProviders(l.Path, &layer, generic)...)
		}
		if !l.Personal && layer.Permissions.DefaultMode == string(permission.ModeBypass) {
			// The project file is committed with the repository: honouring
			// this would let cloning a hostile repository switch every guard
			// off. The personal layers and the flag can still choose it.
			layer.Permissions.DefaultMode = ""
			if perms, ok := generic["permissions"].(map[string]any); ok {
				delete(perms, "defaultMode") // so the merge keeps an earlier layer's mode
			}
			out.Warnings = append(out.Warnings, Warning{File: l.Path, Key: "permissions.defaultMode",
				Message: "bypassPermissions is ignored in a project's shared settings; set it in your user settings, an untracked .cadre/settings.local.json or with --permission-mode"})
		}
		scope := l.Scope
		if !l.Personal {
			scope = ScopeProject
			out.Warnings = append(out.Warnings, dropProjectApproval(l.Path, &layer, generic)...)
			out.Warnings = append(out.Warnings, dropHookApproval(l.Path, &layer, generic)...)
			out.Warnings = append(out.Warnings, dropProjectStore(l.Path, &layer, generic)...)
			// The sandbox block keeps only what narrows, trusted or not:
			// only the user's own layers may turn it off or widen it.
			out.Warnings = append(out.Warnings, dropProjectSandbox(l.Path, &layer, generic)...)
			if found {
				out.Asks = append(out.Asks, narrow(l.Path, &layer, generic, merged, !opts.Trusted)...)
			}
		}
		if len(layer.Hooks) > 0 {
			out.Hooks = append(out.Hooks, HookLayer{Scope: scope, Path: l.Path, Hooks: layer.Hooks})
		}
		if len(layer.MCPServers) > 0 {
			out.MCP = append(out.MCP, MCPLayer{Scope: scope, Path: l.Path, Servers: layer.MCPServers})
		}
		if found {
			merge(reflect.ValueOf(&merged).Elem(), reflect.ValueOf(layer), generic)
			if l.Personal {
				merge(reflect.ValueOf(&personal).Elem(), reflect.ValueOf(layer), generic)
			}
		}
	}
	if opts.Sources == nil || slices.Contains(opts.Sources, ScopeProject) {
		out.Asks = append(out.Asks, mcpjsonAsks(cwd)...)
	}
	// Trust is the approval of the project's hooks and MCP servers (the
	// list `cadre trust` showed named each command; see ProjectHooks and
	// ProjectMCP). Untrusted, nothing the project names runs, whatever
	// approves it.
	if !opts.Trusted {
		merged.EnableProjectHooks, merged.EnableAllProjectMcpServers, merged.EnabledMcpjsonServers = false, false, nil
	}

	out.Warnings = append(out.Warnings, claudeHooks(out, &merged, opts.UserHome, cwd, opts.Sources)...)

	if o := opts.Overrides.Settings; strings.TrimSpace(o) != "" {
		// --settings: a file, or the JSON text itself, read as one more
		// layer above the files, below the other flags.
		layer, generic, warnings, err := readFlagSettings(o, cwd)
		if err != nil {
			return nil, err
		}
		out.Warnings = append(out.Warnings, warnings...)
		if len(layer.Hooks) > 0 {
			out.Hooks = append(out.Hooks, HookLayer{Scope: ScopeFlags, Path: "--settings", Hooks: layer.Hooks})
		}
		merge(reflect.ValueOf(&merged).Elem(), reflect.ValueOf(layer), generic)
		merge(reflect.ValueOf(&personal).Elem(), reflect.ValueOf(layer), generic)
	}
	flagWarnings, err := applyOverrides(&merged, opts.Overrides)
	if err != nil {
		return nil, err
	}
	out.Warnings = append(out.Warnings, flagWarnings...)
	for _, d := range opts.Overrides.AdditionalDirectories {
		// --add-dir: relative to the project, as a shell user means it.
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, &Error{File: ScopeFlags, Key: "--add-dir", Msg: fmt.Sprintf("%s is not a directory", d)}
		}
		merged.Permissions.AdditionalDirectories = append(merged.Permissions.AdditionalDirectories, filepath.Clean(d))
	}
	if err := merged.Store.checkTimes(); err != nil {
		return nil, err
	}
	out.Layers = append(out.Layers, Layer{Scope: ScopeFlags, Found: opts.Overrides.set()})
	out.Settings = merged
	out.Personal = personal
	return out, nil
}

// ProjectHooks reports whether the project's hooks run: in a trusted
// workspace (trusting approved each command it listed), never in another.
func (l *Loaded) ProjectHooks() bool { return l.Trusted }

// ProjectMCP reports whether the project's MCP server name, from .mcp.json
// or a project layer, may start: in a trusted workspace unless a layer
// refuses it (disabledMcpjsonServers); never in an untrusted one.
func (l *Loaded) ProjectMCP(name string) bool {
	return l.Trusted && !slices.Contains(l.Settings.DisabledMcpjsonServers, name)
}

// dropProjectApproval removes the MCP approval keys from the project's
// shared settings: the file comes with the repository, and a repository
// that could approve its own .mcp.json would start any command it likes
// on clone. Refusing (disabledMcpjsonServers) stays.
func dropProjectApproval(path string, layer *Settings, generic map[string]any) []Warning {
	var out []Warning
	for _, key := range []string{"enableAllProjectMcpServers", "enabledMcpjsonServers"} {
		if _, ok := generic[key]; !ok {
			continue
		}
		delete(generic, key)
		out = append(out, Warning{File: path, Key: key,
			Message: "ignored in a project's shared settings: trusting the workspace (cadre trust) approves its MCP servers"})
	}
	layer.EnableAllProjectMcpServers, layer.EnabledMcpjsonServers = false, nil
	return out
}

// dropProjectStore removes store from the project's shared settings: the
// file comes with the repository, and a repository that could choose the
// store would have every session's record (titles, prompts, results) sent
// to a database of its choosing.
func dropProjectStore(path string, layer *Settings, generic map[string]any) []Warning {
	if _, ok := generic["store"]; !ok {
		return nil
	}
	delete(generic, "store")
	layer.Store = Store{}
	return []Warning{{File: path, Key: "store",
		Message: "ignored in a project's shared settings: choose the store in .cadre/settings.local.json, your user settings or CADRE_STORE_URL"}}
}

// cadreHome resolves CADRE_HOME, defaulting to ~/.cadre.
func cadreHome(env, userHome, cwd string) (string, error) {
	if env != "" && env != "~" && !strings.HasPrefix(env, "~/") {
		if !filepath.IsAbs(env) {
			env = filepath.Join(cwd, env)
		}
		return filepath.Clean(env), nil
	}
	if userHome == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("settings: find the home directory for ~/.cadre (set CADRE_HOME instead): %w", err)
		}
		userHome = h
	}
	if env == "" {
		return filepath.Join(userHome, ".cadre"), nil
	}
	return filepath.Join(userHome, env[1:]), nil
}

// overlayAgents puts the definitions of top over those of base, by name;
// both are JSON objects keyed by agent name.
func overlayAgents(base, top json.RawMessage) (json.RawMessage, error) {
	var over map[string]json.RawMessage
	if err := json.Unmarshal(top, &over); err != nil || over == nil {
		return nil, fmt.Errorf("want a JSON object mapping agent names to definitions: %s", orJSONError(err))
	}
	all := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(base)) > 0 && string(bytes.TrimSpace(base)) != "null" {
		if err := json.Unmarshal(base, &all); err != nil {
			return nil, fmt.Errorf("the settings' agents: %w", err)
		}
	}
	for name, def := range over {
		all[name] = def
	}
	return json.Marshal(all)
}

func orJSONError(err error) string {
	if err != nil {
		return err.Error()
	}
	return "got null"
}

// readFlagSettings reads --settings: JSON text when it starts with "{",
// else the path of a file (relative to cwd) that must exist.
func readFlagSettings(v, cwd string) (Settings, map[string]any, []Warning, error) {
	if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
		s, generic, warnings, err := parseSettings("--settings", []byte(t))
		return s, generic, warnings, err
	}
	path := v
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	s, generic, warnings, found, err := readFile(path)
	if err == nil && !found {
		err = &Error{File: path, Key: "--settings", Msg: "settings file not found"}
	}
	return s, generic, warnings, err
}

// readFile reads and checks one settings file. found is false when it
// does not exist.
func readFile(path string) (s Settings, generic map[string]any, warnings []Warning, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil, nil, false, nil
	}
	if err != nil {
		return Settings{}, nil, nil, false, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", err), Err: err}
	}
	s, generic, warnings, err = parseSettings(path, data)
	return s, generic, warnings, true, err
}

// parseSettings checks the settings text data read from file.
func parseSettings(path string, data []byte) (s Settings, generic map[string]any, warnings []Warning, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM some editors write
	if len(bytes.TrimSpace(data)) == 0 {
		return Settings{}, map[string]any{}, nil, nil
	}
	generic, err = parseObject(path, data)
	if err != nil {
		return Settings{}, nil, nil, err
	}
	d := &decoder{file: path, data: data}
	if err := d.decode("", []string{}, generic, reflect.ValueOf(&s).Elem()); err != nil {
		return Settings{}, nil, nil, err
	}
	if err := validate(path, &s, generic); err != nil {
		return Settings{}, nil, nil, err
	}
	return s, generic, append(d.warnings, ruleWarnings(path, &s)...), nil
}

// parseObject parses data as one JSON object, numbers kept as json.Number.
func parseObject(path string, data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		offset := int64(len(data))
		if errors.As(err, &syn) {
			offset = syn.Offset
		} else if !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &Error{File: path, Msg: fmt.Sprintf("invalid JSON: %v", err), Err: err}
		}
		line, col := position(data, offset)
		return nil, &Error{File: path, Line: line, Col: col, Msg: fmt.Sprintf("invalid JSON: %v", err), Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(data, dec.InputOffset())
		return nil, &Error{File: path, Line: line, Col: col, Msg: "invalid JSON: unexpected data after the top-level object"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{File: path, Msg: fmt.Sprintf("want a JSON object at the top level, got %s", jsonType(v))}
	}
	return obj, nil
}

// position turns a byte offset into a 1-based line and column. A syntax
// error's offset is just past the offending byte, so that byte is the
// column reported.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n') - 1
	if col == 0 {
		col = 1
	}
	return line, col
}

// validate checks the values of one layer, and fills in defaults that
// depend on where a value sits (a provider's type from its key).
func validate(file string, s *Settings, generic map[string]any) error {
	bad := func(key, format string, args ...any) error {
		return &Error{File: file, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if s.MaxTurns < 0 {
		return bad("maxTurns", "want 0 (no limit) or more, got %d", s.MaxTurns)
	}
	if perms, ok := generic["permissions"].(map[string]any); ok && perms["defaultMode"] != nil {
		m, err := permission.ParseMode(s.Permissions.DefaultMode)
		if err != nil {
			return bad("permissions.defaultMode", "%v", err)
		}
		s.Permissions.DefaultMode = string(m)
	}
	for _, l := range []struct {
		key   string
		rules []string
	}{{"allow", s.Permissions.Allow}, {"ask", s.Permissions.Ask}, {"deny", s.Permissions.Deny}} {
		for i, text := range l.rules {
			r, err := permission.ParseRule(text)
			if err != nil {
				return bad(fmt.Sprintf("permissions.%s[%d]", l.key, i), "%v", err)
			}
			l.rules[i] = r.String()
		}
	}
	switch c := s.Compaction; {
	case c.Threshold < 0 || c.Threshold > 1:
		return bad("compaction.threshold", "want a share of the window between 0 and 1, got %v", c.Threshold)
	case c.KeepRecent < 0:
		return bad("compaction.keepRecent", "want 0 or more, got %d", c.KeepRecent)
	case c.Window < 0:
		return bad("compaction.window", "want 0 or more tokens, got %d", c.Window)
	}
	if err := s.Store.validate(generic, bad); err != nil {
		return err
	}
	if err := s.Sandbox.validate(generic, bad); err != nil {
		return err
	}
	if d := s.Store.Dispatch; d != "" && d != DispatchSticky && d != DispatchAny {
		return bad("store.dispatch", "want %q or %q, got %s", DispatchSticky, DispatchAny, excerpt.Quote(d))
	}
	if err := s.Subagents.validate(bad); err != nil {
		return err
	}
	if err := s.Limits.validate(bad); err != nil {
		return err
	}
	if err := s.BackgroundShell.validate(bad); err != nil {
		return err
	}
	for name, p := range s.Providers {
		if err := p.validate(name, bad); err != nil {
			return err
		}
		if p.Type == "" {
			p.Type = name
		}
		s.Providers[name] = p
	}
	for model, p := range s.Pricing {
		for _, f := range []struct {
			key string
			v   float64
		}{{"input", p.Input}, {"output", p.Output}, {"cacheRead", p.CacheRead}, {"cacheWrite", p.CacheWrite}} {
			if f.v < 0 {
				return bad(join(join("pricing", model), f.key), "want a price of 0 or more (USD per million tokens), got %g", f.v)
			}
		}
	}
	return nil
}

// applyOverrides applies the command-line flags; the warnings are about
// rules that name no known tool.
func applyOverrides(s *Settings, o Overrides) ([]Warning, error) {
	bad := func(flag string, err error) ([]Warning, error) {
		return nil, &Error{File: ScopeFlags, Key: flag, Msg: err.Error(), Err: err}
	}
	var warnings []Warning
	if o.Model != "" {
		s.Model = o.Model
	}
	if len(o.Agents) > 0 {
		agents, err := overlayAgents(s.Agents, o.Agents)
		if err != nil {
			return bad("--agents", err)
		}
		s.Agents = agents
	}
	if o.MaxTurns != nil {
		if *o.MaxTurns < 0 {
			return bad("--max-turns", fmt.Errorf("want 0 (no limit) or more, got %d", *o.MaxTurns))
		}
		s.MaxTurns = *o.MaxTurns
	}
	if o.PermissionMode != "" {
		m, err := permission.ParseMode(o.PermissionMode)
		if err != nil {
			return bad("--permission-mode", err)
		}
		s.Permissions.DefaultMode = string(m)
	}
	for _, f := range []struct {
		flag string
		vals []string
		dst  *[]string
		m    matching
	}{
		{"--allowedTools", o.AllowedTools, &s.Permissions.Allow, exactGrant},
		{"--disallowedTools", o.DisallowedTools, &s.Permissions.Deny, foldCase},
	} {
		var add []string
		for _, v := range f.vals {
			rules, err := permission.ParseRuleList(v)
			if err != nil {
				return bad(f.flag, err)
			}
			for _, r := range rules {
				add = append(add, r.String())
				if msg := unknownTool(r.Tool, f.m); msg != "" {
					warnings = append(warnings, Warning{File: ScopeFlags, Key: f.flag, Message: msg})
				}
			}
		}
		*f.dst = appendNew(reflect.ValueOf(*f.dst), reflect.ValueOf(add)).Interface().([]string)
	}
	return warnings, nil
}
