package permission

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/tool"
)

// Family rule names: a rule for one of these covers every tool of that
// access, so Read(secrets/**) also keeps Grep and Glob out of secrets/.
const (
	familyRead = "Read"
	familyEdit = "Edit"
)

func isPathFamily(name string) bool { return name == familyRead || name == familyEdit }

// call is what the rules of one Permit are matched against.
type call struct {
	name   string
	access tool.Access
	target string // absolute path for file tools, the command for exec tools
	cwd    string // base of "./x" and "x" patterns
}

// list says which rule list a rule comes from; allow rules match compound
// commands more strictly than deny and ask rules.
type list int

const (
	listAllow list = iota
	listAsk
	listDeny
)

// namesTool reports whether the rule's tool part names the tool: literally,
// by wildcard ("mcp__srv__*"), as a whole MCP server ("mcp__srv"), or by
// the Agent/Task alias. Access families are not considered here.
func (r Rule) namesTool(name string) bool {
	if canonicalTool(r.Tool) == canonicalTool(name) {
		return true
	}
	if strings.Contains(r.Tool, "*") && wildcard(r.Tool, name) {
		return true
	}
	if server, ok := strings.CutPrefix(r.Tool, "mcp__"); ok && server != "" && !strings.Contains(server, "__") {
		return strings.HasPrefix(name, r.Tool+"__")
	}
	return false
}

// canonicalTool folds tool-name aliases that rules treat as one tool.
func canonicalTool(name string) string {
	if name == "Task" {
		// Claude Code renamed Task to Agent; Task(...) rules still apply.
		return "Agent"
	}
	return name
}

// covers reports whether the rule's tool part applies to the call: it
// names the tool, or it is the Read/Edit family rule of the call's access.
func (r Rule) covers(c call) bool {
	if r.namesTool(c.name) {
		return true
	}
	switch r.Tool {
	case familyRead:
		return c.access == tool.AccessRead
	case familyEdit:
		return c.access == tool.AccessEdit
	}
	return false
}

// matches reports whether r, taken from list l, applies to the call.
func (p *Policy) matches(r Rule, c call, l list) bool {
	if !r.covers(c) {
		return false
	}
	if r.bare() {
		return true
	}
	if c.target == "" {
		// Nothing for a specifier to match: the tool names no target.
		return false
	}
	switch matcherFor(c) {
	case matchCommand:
		return matchCommandRule(r.Specifier, c.target, l)
	case matchPath:
		m, err := p.matchPathRule(r.Specifier, c.target, c.cwd)
		if err != nil {
			// A malformed pattern fails closed: it never allows, but a
			// deny or ask rule still holds.
			return l != listAllow
		}
		return m
	default:
		return wildcard(r.Specifier, c.target)
	}
}

type matcher int

const (
	matchGeneric matcher = iota
	matchCommand
	matchPath
)

// matcherFor picks how specifiers match the call's target. This is the
// hook for tool-specific specifier semantics. Agent(name)/Task(name) rules
// match generically here, against whatever target the tool reports; the
// spawn decision itself is PermitSpawn's, which matches them by agent name.
func matcherFor(c call) matcher {
	switch c.access {
	case tool.AccessExec:
		return matchCommand
	case tool.AccessRead, tool.AccessEdit:
		return matchPath
	}
	return matchGeneric
}

// matchCommandRule matches a Bash specifier against a command line.
func matchCommandRule(spec, command string, l list) bool {
	spec = collapseSpace(spec)
	if l == listAllow {
		parts, subst := splitCommand(command, false)
		if subst || len(parts) == 0 {
			// A substitution runs a command the rule never saw.
			return false
		}
		for _, part := range parts {
			if !matchCommandPart(spec, part) {
				return false
			}
		}
		return true
	}
	whole, _ := splitCommand(command, false)
	inner, _ := splitCommand(command, true)
	for _, part := range append(whole, inner...) {
		bare := stripAssignments(part)
		for _, cand := range [...]string{part, bare, unquote(part), unquote(bare)} {
			if matchCommandPart(spec, cand) {
				return true
			}
		}
	}
	return false
}

// matchCommandPart matches one simple command: "cmd:*" and "cmd *" are
// prefixes ending at a word boundary, anything else is matched whole.
func matchCommandPart(spec, part string) bool {
	if part == "" {
		return false
	}
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		return wildcard(prefix, part) || wildcard(prefix+" *", part)
	}
	if prefix, ok := strings.CutSuffix(spec, " *"); ok && prefix != "" {
		return wildcard(prefix, part) || wildcard(spec, part)
	}
	return wildcard(spec, part)
}

// matchPathRule matches a gitignore-style path specifier against an
// absolute target.
func (p *Policy) matchPathRule(spec, target, cwd string) (bool, error) {
	pattern, ok := p.anchor(spec, cwd)
	if !ok {
		return false, nil
	}
	if !doublestar.ValidatePattern(pattern) {
		// Match may stop before it reaches the bad part; check it all.
		return false, doublestar.ErrBadPattern
	}
	target = filepath.ToSlash(filepath.Clean(target))
	if m, err := doublestar.Match(pattern, target); err != nil || m {
		return m, err
	}
	// A pattern naming a directory covers what is inside it.
	return doublestar.Match(pattern+"/**", target)
}

// anchor turns a rule's path pattern into an absolute doublestar pattern.
func (p *Policy) anchor(spec, cwd string) (string, bool) {
	spec = strings.TrimSuffix(spec, "/")
	switch {
	case strings.HasPrefix(spec, "//"):
		return spec[1:], true
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		if p.Home == "" {
			return "", false
		}
		return joinPattern(p.Home, spec[1:]), true
	case strings.HasPrefix(spec, "/"):
		root := p.workspace(cwd)
		if root == "" {
			return "", false
		}
		return joinPattern(root, spec), true
	}
	if cwd == "" {
		cwd = p.Workspace
	}
	if cwd == "" {
		return "", false
	}
	if rest, ok := strings.CutPrefix(spec, "./"); ok {
		return joinPattern(cwd, "/"+rest), true
	}
	if spec == "." {
		return joinPattern(cwd, ""), true
	}
	if !strings.Contains(spec, "/") {
		// gitignore: a pattern without a slash matches at any depth.
		return joinPattern(cwd, "/**/"+spec), true
	}
	return joinPattern(cwd, "/"+spec), true
}

// joinPattern puts a pattern tail (empty or starting with "/") under a
// literal directory, escaping the directory's glob metacharacters.
func joinPattern(dir, tail string) string {
	dir = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(dir)), "/")
	return escapeMeta(dir) + tail
}

func escapeMeta(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wildcard matches s against pattern, where "*" matches any run of
// characters (slashes and spaces included) and "\*" a literal star.
func wildcard(pattern, s string) bool {
	// Iterative matcher with one backtrack point: linear in practice and
	// never exponential, whatever the pattern.
	var (
		pi, si       int
		starP, starS = -1, 0
	)
	for si < len(s) {
		if pi < len(pattern) {
			switch c := pattern[pi]; {
			case c == '*':
				starP, starS = pi, si
				pi++
				continue
			case c == '\\' && pi+1 < len(pattern):
				if pattern[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			case c == s[si]:
				pi++
				si++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		pi = starP + 1
		starS++
		si = starS
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
