package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/frontmatter"
)

// LoadOptions says where Load looks for definitions.
type LoadOptions struct {
	// Cwd is the main workspace (the project root); "" skips project dirs.
	Cwd string
	// UserDir holds the user's Claude-format agent files, e.g.
	// $CADRE_HOME/agents; "" skips it.
	UserDir string
	// Settings is the settings' "agents" object (name → JSON definition);
	// nil or null means none.
	Settings json.RawMessage
	// SettingsFile names the settings in messages.
	SettingsFile string
	// Declared are Go SDK declarations, checked with the stricter code rules.
	Declared []Definition
	// Factories are SDK factories, called once by Load.
	Factories []func() ([]Definition, error)
	// Narrow, when set, changes every definition read from a project
	// directory before it is registered: how an untrusted project's agent
	// files lose what would widen their runs (package trust).
	Narrow func(*Definition)
	// KnownProvider, when set, says whether a provider name (the part of
	// a model before ":") is defined: built in, or a profile of the
	// user's settings. A definition whose model names another fails to
	// load, naming its file and the profile: falling back to the parent's
	// model would run the agent on an account it was not meant for.
	KnownProvider func(name string) bool
}

// projectDir is one project directory Load scans, in precedence order.
type projectDir struct {
	dir    string
	format Format
}

// projectDirs lists the project directories, lowest precedence first:
// cadre's own directory comes last so that it wins among them.
func projectDirs() []projectDir {
	return []projectDir{
		{".claude/agents", FormatClaude},
		{".opencode/agent", FormatOpenCode},
		{".opencode/agents", FormatOpenCode},
		{"workspace/subagents", FormatHarness},
		{".cadre/agents", FormatClaude},
	}
}

// Registry holds the definitions Load found. It is safe for concurrent
// use; only Replace changes it, all at once.
type Registry struct {
	mu       sync.RWMutex
	entries  []Entry
	active   map[string]int // folded name → index into entries
	problems []Problem
}

// Load reads every source in precedence order (built-in, user dir,
// project dirs, settings, SDK declarations, SDK factories; later wins by
// name). It never fails as a whole: a bad file becomes a Problem and an
// invalid Entry, and the rest load.
func Load(opts LoadOptions) *Registry {
	l := &loader{project: opts.Cwd, narrow: opts.Narrow, known: opts.KnownProvider}
	l.add(GeneralPurpose(), nil)
	if opts.UserDir != "" {
		l.dir(opts.UserDir, FormatClaude, SourceUser)
	}
	if opts.Cwd != "" {
		for _, pd := range projectDirs() {
			l.dir(filepath.Join(opts.Cwd, filepath.FromSlash(pd.dir)), pd.format, SourceProject)
		}
	}
	l.settings(opts.Settings, opts.SettingsFile)
	for i, d := range opts.Declared {
		l.code(d, fmt.Sprintf("SDK declaration %d", i+1))
	}
	for i, f := range opts.Factories {
		where := fmt.Sprintf("SDK factory %d", i+1)
		defs, err := callFactory(f)
		if err != nil {
			l.problem(&Problem{Path: where, Message: err.Error()})
			continue
		}
		for j, d := range defs {
			l.code(d, fmt.Sprintf("%s, definition %d", where, j+1))
		}
	}
	return l.registry()
}

type loader struct {
	// project is the project root (LoadOptions.Cwd), which the project's
	// files may not reach out of.
	project  string
	narrow   func(*Definition)
	known    func(string) bool
	entries  []Entry
	problems []Problem
}

func (l *loader) problem(p *Problem) { l.problems = append(l.problems, *p) }

// add records one definition with the problems that make it invalid.
func (l *loader) add(d Definition, problems []*Problem) {
	if l.narrow != nil && d.Source == SourceProject {
		l.narrow(&d)
	}
	if p := l.checkProvider(d); p != nil && len(problems) == 0 {
		problems = []*Problem{p}
	}
	e := Entry{Definition: d}
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			l.problem(p)
			errs[i] = p
		}
		e.Err = errs[0]
		if len(errs) > 1 {
			e.Err = errors.Join(errs...)
		}
	}
	l.entries = append(l.entries, e)
}

// checkProvider reports a definition whose model names a provider (a
// profile) that is not defined. OpenCode writes every model
// provider/model, so its files are read that way too.
func (l *loader) checkProvider(d Definition) *Problem {
	if l.known == nil || d.Model == "" {
		return nil
	}
	p, m, ok := strings.Cut(d.Model, ":")
	if !ok && d.Format == FormatOpenCode {
		p, m, ok = strings.Cut(d.Model, "/")
	}
	if !ok || p == "" || m == "" || l.known(p) {
		return nil
	}
	return &Problem{Path: d.Path, Line: d.Line, Name: d.Name,
		Message: fmt.Sprintf("model %s names the provider profile %s, which is not defined: declare providers.%s in your user settings ($CADRE_HOME/settings.json) or --settings (a project's files cannot define one)",
			excerpt.Quote(d.Model), excerpt.Quote(p), excerpt.Clip(p))}
}

// dir loads the first level of *.md files in dir, sorted by name. A
// missing directory is not a problem. Dot files (editor droppings) are
// skipped.
func (l *loader) dir(dir string, format Format, source string) {
	list, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.problem(&Problem{Path: dir, Message: fmt.Sprintf("cannot read agents directory: %v", err)})
		}
		return
	}
	for _, de := range list {
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if de.IsDir() {
			continue
		}
		if de.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(path); err == nil && info.IsDir() {
				continue
			}
		}
		data, err := readLimited(path)
		if err != nil {
			d := Definition{Name: foldName(strings.TrimSuffix(name, ".md")), Format: format, Source: source, Path: path}
			l.add(d, []*Problem{{Path: path, Name: d.Name, Message: fmt.Sprintf("cannot read agent file: %v", err)}})
			continue
		}
		within := ""
		if source == SourceProject {
			within = l.project
		}
		d, problems, skip := parseFile(path, data, format, source, within)
		if skip {
			continue
		}
		l.add(d, problems)
	}
}

// settings loads the settings' agents object. Its key order does not
// matter: entries load sorted by name.
func (l *loader) settings(raw json.RawMessage, file string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	if file == "" {
		file = "settings"
	}
	root, err := jsonNode(raw)
	if err != nil {
		l.problem(&Problem{Path: file, Message: fmt.Sprintf("agents: not valid JSON: %v", err)})
		return
	}
	if root.Kind != yaml.MappingNode {
		l.problem(&Problem{Path: file, Message: fmt.Sprintf("agents: want an object mapping agent names to definitions, got %s", frontmatter.Describe(root))})
		return
	}
	type kv struct {
		key string
		n   *yaml.Node
	}
	var items []kv
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key := root.Content[i].Value
		if seen[key] {
			l.problem(&Problem{Path: file, Name: foldName(key), Message: fmt.Sprintf("agents.%s: given twice; the first is used", excerpt.Clip(key))})
			continue
		}
		seen[key] = true
		items = append(items, kv{key, root.Content[i+1]})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].key < items[j].key })
	for _, it := range items {
		d, problems := parseSettingsEntry(file, it.key, it.n)
		l.add(d, problems)
	}
}

// code loads one SDK definition.
func (l *loader) code(d Definition, where string) {
	def, problems := checkCode(d, where)
	l.add(def, problems)
}

// callFactory runs an SDK factory; a panic is the factory's failure, not
// the process's.
func callFactory(f func() ([]Definition, error)) (defs []Definition, err error) {
	if f == nil {
		return nil, errors.New("factory is nil")
	}
	defer func() {
		if r := recover(); r != nil {
			defs, err = nil, fmt.Errorf("factory panicked: %v", r)
		}
	}()
	defs, err = f()
	if err != nil {
		return nil, fmt.Errorf("factory failed: %w", err)
	}
	return defs, nil
}

// registry settles which entry is active for each name: the last valid
// one. An invalid definition never shadows a valid one, so a broken
// override leaves the working agent in place.
func (l *loader) registry() *Registry {
	r := &Registry{entries: l.entries, active: map[string]int{}, problems: l.problems}
	for i, e := range r.entries {
		if e.Err == nil {
			r.active[foldName(e.Definition.Name)] = i
		}
	}
	for i := range r.entries {
		e := &r.entries[i]
		if e.Err != nil {
			continue
		}
		w := r.active[foldName(e.Definition.Name)]
		if w == i {
			e.Active = true
		} else {
			e.ShadowedBy = origin(r.entries[w].Definition)
		}
	}
	return r
}

// origin says where a definition came from, for listings.
func origin(d Definition) string {
	switch d.Source {
	case SourceBuiltin:
		return SourceBuiltin
	case SourceSDK:
		return "SDK"
	case SourceSettings:
		return fmt.Sprintf("%s (agents.%s)", d.Path, d.Name)
	}
	return d.Path
}

// Replace puts from's definitions in place of r's, at once: the way a
// definition created while cadre runs (the TUI's /agents create) takes
// effect, for every holder of r. from is not used afterwards.
func (r *Registry) Replace(from *Registry) {
	from.mu.RLock()
	entries, active, problems := from.entries, from.active, from.problems
	from.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries, r.active, r.problems = entries, active, problems
}

// Get returns the active definition named name (case ignored).
func (r *Registry) Get(name string) (Definition, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.active[foldName(name)]
	if !ok {
		return Definition{}, false
	}
	return r.entries[i].Definition.clone(), true
}

// All returns the active definitions sorted by name, built-ins included.
func (r *Registry) All() []Definition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Definition, 0, len(r.active))
	for _, i := range r.active {
		out = append(out, r.entries[i].Definition.clone())
	}
	slices.SortFunc(out, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Entries returns every definition seen, in load order, with whether it
// is active, what shadows it, or why it is invalid.
func (r *Registry) Entries() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, len(r.entries))
	for i, e := range r.entries {
		e.Definition = e.Definition.clone()
		out[i] = e
	}
	return out
}

// Problems returns everything that kept a definition (or a source) from
// loading, in load order.
func (r *Registry) Problems() []Problem {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.problems)
}

// clone copies d's slices and maps so that callers cannot change the
// registry's copy. MCPServers and Hooks are copied one level deep.
func (d Definition) clone() Definition {
	d.Tools = slices.Clone(d.Tools)
	d.DisallowedTools = slices.Clone(d.DisallowedTools)
	d.MCPServers = slices.Clone(d.MCPServers)
	d.RequiredMCPServers = slices.Clone(d.RequiredMCPServers)
	d.Skills = slices.Clone(d.Skills)
	d.AllowAgents = slices.Clone(d.AllowAgents)
	d.Headers = maps.Clone(d.Headers)
	d.TaskRules = slices.Clone(d.TaskRules)
	d.Allow = slices.Clone(d.Allow)
	d.Ask = slices.Clone(d.Ask)
	d.Deny = slices.Clone(d.Deny)
	d.Warnings = slices.Clone(d.Warnings)
	if d.Temperature != nil {
		t := *d.Temperature
		d.Temperature = &t
	}
	if d.Workspace != nil {
		w := *d.Workspace
		d.Workspace = &w
	}
	return d
}
