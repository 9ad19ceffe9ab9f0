package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/frontmatter"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/remote"
	"github.com/cadre-dev/cadre/internal/suggest"
	"github.com/cadre-dev/cadre/llm"
)

// parser reads the fields of one definition from a YAML node tree (a
// markdown frontmatter, or a settings entry converted from JSON) and
// collects every problem, so that a file with several mistakes is fixed
// in one round.
type parser struct {
	format Format
	path   string
	// prefix starts every key path in messages: "" in files, where the
	// line says where, "agents.<name>." in settings.
	prefix string
	// lines is true when node lines are file lines (plus offset).
	lines  bool
	offset int
	name   string
	// within, when set, is the directory a {file:…} prompt reference must
	// resolve inside (the project, for a project's agent file).
	within string

	problems []*Problem
	warnings []*Problem

	// nodes holds each field's key node, for the lines of checks made
	// after all fields are read.
	nodes     map[string]*yaml.Node
	prompt    *yaml.Node // the "prompt" value, if any
	nameNode  *yaml.Node // the "name" value, if any
	turnsKey  string     // which of maxTurns/maxIters/steps/maxSteps set MaxTurns
	effortKey string     // which of effort/thinking set Effort
	disabled  bool
}

func (p *parser) line(n *yaml.Node) int {
	if !p.lines || n == nil || n.Line == 0 {
		return 0
	}
	return n.Line + p.offset
}

func (p *parser) where(key string) string {
	k := strings.TrimSuffix(p.prefix+key, ".")
	if k == "" {
		return ""
	}
	return k + ": "
}

// firstLine is the line of checks that belong to the whole definition.
func (p *parser) firstLine() int {
	if p.lines {
		return 1
	}
	return 0
}

// lineOf gives the line of field key, or the first line if it is absent.
func (p *parser) lineOf(key string) int {
	if n := p.nodes[key]; n != nil {
		return p.line(n)
	}
	return p.firstLine()
}

func (p *parser) errorf(n *yaml.Node, key, format string, args ...any) {
	p.errorAt(p.line(n), key, format, args...)
}

func (p *parser) errorAt(line int, key, format string, args ...any) {
	p.problems = append(p.problems, &Problem{
		Path: p.path, Line: line, Name: p.name,
		Message: p.where(key) + fmt.Sprintf(format, args...),
	})
}

func (p *parser) warnf(n *yaml.Node, key, format string, args ...any) {
	p.warnAt(p.line(n), key, format, args...)
}

func (p *parser) warnAt(line int, key, format string, args ...any) {
	p.warnings = append(p.warnings, &Problem{Path: p.path, Line: line, Message: p.where(key) + fmt.Sprintf(format, args...)})
}

// Colors are the values of an agent's color field, Claude Code's.
func Colors() []string {
	return []string{"red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"}
}

// hexColor reports "#RRGGBB", OpenCode's color form.
func hexColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	_, err := strconv.ParseUint(s[1:], 16, 32)
	return err == nil
}

// fieldNames lists the fields a format knows, for unknown-field warnings.
func fieldNames(f Format) []string {
	names := []string{
		"description", "prompt", "tools", "disallowedTools", "model", "effort", "thinking",
		"permissionMode", "background", "isolation", "maxTurns", "maxIters", "memory",
		"mcpServers", "requiredMcpServers", "hooks", "skills", "initialPrompt", "color",
		"hidden", "mode", "temperature", "workspace", "url", "headers", "permission", "name",
		"allowAgents", "omitClaudeMd",
	}
	if f == FormatOpenCode {
		names = append(names, "steps", "maxSteps", "disable")
	}
	return names
}

// fields applies the mapping root to d.
func (p *parser) fields(root *yaml.Node, d *Definition) {
	known := fieldNames(p.format)
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := frontmatter.Deref(root.Content[i]), frontmatter.Deref(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "", "a field name must be a string, got %s", frontmatter.Describe(k))
			continue
		}
		key := k.Value
		if first, dup := seen[key]; dup {
			if p.lines {
				p.errorf(k, excerpt.Clip(key), "given twice (first on line %d)", first)
			} else {
				p.errorf(k, excerpt.Clip(key), "given twice")
			}
			continue
		}
		seen[key] = p.line(k)
		p.nodes[key] = k
		if !slices.Contains(known, key) {
			msg := fmt.Sprintf("unknown field %s ignored", excerpt.Quote(key))
			if s, ok := suggest.Closest(key, known); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.warnf(k, "", "%s", msg)
			continue
		}
		p.field(key, k, v, d)
	}
}

func (p *parser) field(key string, k, v *yaml.Node, d *Definition) {
	switch key {
	case "name":
		p.nameNode = v
	case "description":
		d.Description = strings.TrimSpace(p.text(v, key))
	case "prompt":
		p.prompt = v
	case "tools":
		p.tools(v, d)
	case "disallowedTools":
		d.DisallowedTools = appendNew(d.DisallowedTools, p.list(v, key)...)
	case "model":
		d.Model = strings.TrimSpace(p.text(v, key))
	case "effort", "thinking":
		if p.effortKey != "" {
			p.warnf(k, key, "ignored: %s already sets the effort", p.effortKey)
			return
		}
		p.effortKey = key
		d.Effort = strings.TrimSpace(p.text(v, key))
		if _, err := llm.ParseEffort(d.Effort); err != nil {
			// Left out rather than refused: a level a newer Claude Code
			// knows must not stop the agent from loading.
			p.warnf(v, key, "%v; ignored, the model's default applies", err)
			d.Effort = ""
		}
	case "permissionMode":
		d.PermissionMode = p.permissionMode(v, key)
	case "background":
		d.Background = p.boolean(v, key)
	case "isolation":
		d.Isolation = p.enum(v, key, IsolationWorktree, IsolationRemote)
	case "maxTurns", "maxIters", "steps", "maxSteps":
		n, ok := p.count(v, key)
		if !ok {
			return
		}
		if p.turnsKey != "" {
			p.warnf(k, key, "ignored: %s already sets the turn limit", p.turnsKey)
			return
		}
		p.turnsKey = key
		d.MaxTurns = n
	case "memory":
		d.Memory = p.enum(v, key, "user", "project", "local")
	case "mcpServers":
		d.MCPServers = p.mcpServers(v, key)
	case "requiredMcpServers":
		d.RequiredMCPServers = p.list(v, key)
	case "hooks":
		if v.Kind == yaml.MappingNode {
			d.Hooks = p.hooks(v, key)
		} else if !isNull(v) {
			p.errorf(v, key, "want a mapping of hook events to matchers, got %s", frontmatter.Describe(v))
		}
	case "skills":
		d.Skills = p.list(v, key)
	case "initialPrompt":
		d.InitialPrompt = p.text(v, key)
	case "color":
		d.Color = strings.TrimSpace(p.text(v, key))
		if d.Color != "" && !slices.Contains(Colors(), strings.ToLower(d.Color)) && !hexColor(d.Color) {
			p.warnf(v, key, "%s is not a color cadre shows (want one of %s, or #RRGGBB as OpenCode writes it); the agent is shown without one", excerpt.Quote(d.Color), strings.Join(Colors(), ", "))
			d.Color = ""
		}
	case "hidden":
		d.Hidden = p.boolean(v, key)
	case "omitClaudeMd":
		d.OmitClaudeMD = p.boolean(v, key)
	case "allowAgents":
		// An empty list is kept, not nil: only the agent's own, whatever
		// the settings say.
		d.AllowAgents = p.list(v, key)
		for i, name := range d.AllowAgents {
			if name == "*" {
				continue
			}
			if err := ValidateName(name); err != nil {
				p.errorf(v, fmt.Sprintf("%s[%d]", key, i), "want an agent name or \"*\": %v", err)
			}
		}
	case "mode":
		d.Mode = p.enum(v, key, ModePrimary, ModeSubagent, ModeAll)
	case "temperature":
		d.Temperature = p.number(v, key)
	case "workspace":
		d.Workspace = p.workspace(v, key)
	case "url":
		d.URL = strings.TrimSpace(p.text(v, key))
		if d.URL != "" {
			if err := checkURL(d.URL); err != nil {
				p.errorf(v, key, "%v", err)
			}
		}
	case "headers":
		d.Headers = p.headers(v, key)
	case "permission":
		p.permission(v, key, d)
	case "disable":
		p.disabled = p.boolean(v, key)
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// text reads a scalar; nothing (null) reads as "".
func (p *parser) text(n *yaml.Node, key string) string {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, key, "want a string, got %s", frontmatter.Describe(n))
		return ""
	}
	if isNull(n) {
		return ""
	}
	return n.Value
}

// list reads a YAML list of strings or Claude Code's comma-separated
// string ("Read, Grep, Glob"), as frontmatter.List does.
func (p *parser) list(n *yaml.Node, key string) []string {
	out, bad := frontmatter.List(n, key, frontmatter.Commas)
	for _, b := range bad {
		p.errorf(b.Node, b.Key, "%s", b.Msg)
	}
	return out
}

func (p *parser) boolean(n *yaml.Node, key string) bool {
	if isNull(n) {
		return false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		p.errorf(n, key, "want true or false, got %s", frontmatter.Describe(n))
		return false
	}
	b, _ := strconv.ParseBool(n.Value)
	return b
}

// count reads a whole number ≥ 0.
func (p *parser) count(n *yaml.Node, key string) (int, bool) {
	if isNull(n) {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		i, err := strconv.ParseInt(n.Value, 10, 32)
		if err != nil {
			i, err = strconv.ParseInt(n.Value, 0, 32)
		}
		switch {
		case err != nil:
			p.errorf(n, key, "%s is out of range", excerpt.Quote(n.Value))
		case i < 0:
			p.errorf(n, key, "must not be negative, got %d", i)
		default:
			return int(i), true
		}
		return 0, false
	}
	p.errorf(n, key, "want a whole number, got %s", frontmatter.Describe(n))
	return 0, false
}

func (p *parser) number(n *yaml.Node, key string) *float64 {
	if isNull(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return &f
		}
	}
	p.errorf(n, key, "want a number, got %s", frontmatter.Describe(n))
	return nil
}

// enum reads one of allowed (case ignored), returned as spelled in allowed.
func (p *parser) enum(n *yaml.Node, key string, allowed ...string) string {
	s := strings.TrimSpace(p.text(n, key))
	if s == "" {
		return ""
	}
	v, err := oneOf(s, allowed...)
	if err != nil {
		p.errorf(n, key, "%v", err)
	}
	return v
}

func oneOf(s string, allowed ...string) (string, error) {
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return a, nil
		}
	}
	return "", fmt.Errorf("%s is not valid: want one of %s", excerpt.Quote(s), strings.Join(allowed, ", "))
}

func permissionModes() []string {
	return []string{"plan", "default", "acceptEdits", "bypassPermissions"}
}

func (p *parser) permissionMode(n *yaml.Node, key string) string {
	s := strings.TrimSpace(p.text(n, key))
	if s == "" {
		return ""
	}
	v, err := checkPermissionMode(s)
	if err != nil {
		p.errorf(n, key, "%v", err)
	}
	return v
}

func checkPermissionMode(s string) (string, error) {
	if strings.EqualFold(s, "bubble") {
		return "", fmt.Errorf("%q is reserved for the fork agent: want one of %s", s, strings.Join(permissionModes(), ", "))
	}
	return oneOf(s, permissionModes()...)
}

func (p *parser) mcpServers(n *yaml.Node, key string) []any {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		var out []any
		for _, s := range frontmatter.SplitList(n.Value, frontmatter.Commas) {
			out = append(out, s)
		}
		return out
	case n.Kind == yaml.SequenceNode:
		out := []any{}
		for i, e := range n.Content {
			e = frontmatter.Deref(e)
			switch {
			case e.Kind == yaml.ScalarNode && e.ShortTag() == "!!str":
				out = append(out, e.Value)
			case e.Kind == yaml.MappingNode:
				out = append(out, toAny(e))
			default:
				p.errorf(e, fmt.Sprintf("%s[%d]", key, i), "want a server name or a mapping of name to server config, got %s", frontmatter.Describe(e))
			}
		}
		return out
	}
	p.errorf(n, key, "want a list of server names or server configs, got %s", frontmatter.Describe(n))
	return nil
}

func (p *parser) workspace(n *yaml.Node, key string) *Workspace {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		// A bare string is the path: "workspace: ./defs/reviewer".
		return &Workspace{Path: strings.TrimSpace(n.Value)}
	case n.Kind != yaml.MappingNode:
		p.errorf(n, key, "want a mapping with mode (isolated or shared) and path, got %s", frontmatter.Describe(n))
		return nil
	}
	w := &Workspace{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := frontmatter.Deref(n.Content[i]), frontmatter.Deref(n.Content[i+1])
		switch k.Value {
		case "mode":
			w.Mode = p.enum(v, key+".mode", WorkspaceIsolated, WorkspaceShared)
		case "path":
			w.Path = strings.TrimSpace(p.text(v, key+".path"))
		default:
			p.warnf(k, key, "unknown field %s ignored (want mode or path)", excerpt.Quote(k.Value))
		}
	}
	return w
}

func (p *parser) headers(n *yaml.Node, key string) map[string]string {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, key, "want a mapping of header names to values, got %s", frontmatter.Describe(n))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := frontmatter.Deref(n.Content[i]), frontmatter.Deref(n.Content[i+1])
		if v.Kind != yaml.ScalarNode || isNull(v) {
			p.errorf(v, key+"."+excerpt.Clip(k.Value), "want a string, got %s", frontmatter.Describe(v))
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

// checkURL applies the rule the remote-agent client applies
// (remote.Origin) where the definition is loaded: an absolute http or
// https URL with a host and no user info. A URL the client would refuse
// fails the file, not its first Agent call.
func checkURL(s string) error {
	// The client's error quotes the whole URL; a message quotes an
	// excerpt of what a file holds (TestMessagesQuoteOnlyAnExcerpt).
	if _, err := remote.Origin(s); err != nil {
		return fmt.Errorf("%s is not an absolute http or https URL with a host and no user info", excerpt.Quote(s))
	}
	return nil
}

// toAny converts a node to plain Go values (map[string]any, []any,
// string, int64, float64, bool, nil) for fields kept for later use.
func toAny(n *yaml.Node) any {
	n = frontmatter.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[frontmatter.Deref(n.Content[i]).Value] = toAny(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			s = append(s, toAny(e))
		}
		return s
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			b, _ := strconv.ParseBool(n.Value)
			return b
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				return i
			}
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return i
			}
		case "!!float":
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return f
			}
		}
		return n.Value
	}
	return nil
}

// appendNew appends the items of add not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// hooks reads an agent's hooks, in Claude Code's settings shape. What
// cannot run is said here, once per file: a hook type other than command
// or an event cadre does not fire is a warning, a matcher that is not a
// valid expression or a hook with no command an error.
func (p *parser) hooks(v *yaml.Node, key string) any {
	h := toAny(v)
	raw, err := json.Marshal(h)
	if err == nil {
		var set hook.Settings
		if set, err = hook.ParseSettings(raw); err == nil {
			var warnings []string
			_, warnings, err = set.Config("hooks", "")
			for _, w := range warnings {
				p.warnf(v, key, "%s", strings.TrimPrefix(w, "hooks."))
			}
		}
	}
	if err != nil {
		p.errorf(v, key, "%v", err)
		return nil
	}
	return h
}
